"""A small Wadler-style document printer, used to print jaxprs.

A document is built from `text`, `concat`, `nest`, `group` and `brk`. A `brk`
prints as its text when the enclosing group fits on the line, and as a newline
plus the current indentation otherwise. A group is laid out flat when its own
contents fit in the width left on the current line (JAX's variant of Lindig's
"Strictly Pretty", which checks only the group, not the rest of the document).
The outermost document starts in break mode.
"""
from __future__ import annotations

from collections.abc import Sequence

_FLAT, _BREAK = 0, 1


class Doc:
  """A pretty-printer document; `str(doc)` formats it at width 80."""
  __slots__ = ()

  def __add__(self, other: Doc) -> Doc:
    return concat([self, other])

  def format(self, width: int = 80) -> str:
    return _format(self, width)

  def __str__(self) -> str:
    return self.format()


class _Text(Doc):
  __slots__ = ("text",)

  def __init__(self, text: str):
    self.text = text


class _Concat(Doc):
  __slots__ = ("children",)

  def __init__(self, children):
    self.children = children


class _Break(Doc):
  __slots__ = ("text",)

  def __init__(self, text: str):
    self.text = text


class _Nest(Doc):
  __slots__ = ("n", "child")

  def __init__(self, n: int, child: Doc):
    self.n, self.child = n, child


class _Group(Doc):
  __slots__ = ("child",)

  def __init__(self, child: Doc):
    self.child = child


_NIL = _Concat(())


def nil() -> Doc:
  """The empty document."""
  return _NIL


def text(s: str) -> Doc:
  """Literal text (must not contain newlines)."""
  return _Text(s)


def concat(docs: Sequence[Doc]) -> Doc:
  """The documents one after another."""
  docs = [d for d in docs if d is not _NIL]
  return docs[0] if len(docs) == 1 else _Concat(tuple(docs))


def brk(s: str = " ") -> Doc:
  """A break: `s` when its group is flat, else a newline and indentation."""
  return _Break(s)


def nest(n: int, doc: Doc) -> Doc:
  """`doc` with `n` more columns of indentation after each break."""
  return _Nest(n, doc)


def group(doc: Doc) -> Doc:
  """`doc` laid out flat if it fits on the line, else with its breaks broken."""
  return _Group(doc)


def join(sep: Doc, docs: Sequence[Doc]) -> Doc:
  """The documents with `sep` between each pair."""
  out = []
  for i, d in enumerate(docs):
    if i:
      out.append(sep)
    out.append(d)
  return concat(out)


def _fits(doc: Doc, width: int) -> bool:
  agenda = [doc]
  while width >= 0 and agenda:
    d = agenda.pop()
    if isinstance(d, (_Text, _Break)):
      width -= len(d.text)
    elif isinstance(d, _Concat):
      agenda.extend(reversed(d.children))
    else:  # _Nest or _Group
      agenda.append(d.child)
  return width >= 0


def _format(doc: Doc, width: int) -> str:
  lines: list[str] = []
  line: list[str] = []
  column = 0
  agenda = [(0, _BREAK, doc)]
  while agenda:
    indent, mode, d = agenda.pop()
    if isinstance(d, _Text):
      line.append(d.text)
      column += len(d.text)
    elif isinstance(d, _Concat):
      agenda.extend((indent, mode, c) for c in reversed(d.children))
    elif isinstance(d, _Break):
      if mode == _BREAK:
        lines.append("".join(line))
        line = [" " * indent]
        column = indent
      else:
        line.append(d.text)
        column += len(d.text)
    elif isinstance(d, _Nest):
      agenda.append((indent + d.n, mode, d.child))
    else:
      agenda.append((indent, _FLAT if _fits(d, width - column) else _BREAK, d.child))
  lines.append("".join(line))
  return "\n".join(lines)
