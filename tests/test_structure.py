"""The package's shape: import circles stay inside one folder, no file passes 1,200 lines.

Every import counts, at module level or inside a function: a deferred import still ties
two modules together. The public modules outside `xjax/_src` only hand names on, so an
import of one counts as importing what it imports. The layer order these checks keep is
written out in docs/architecture.md.
"""
import ast
import pathlib
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "xjax"
MAX_LINES = 1200


def _module_name(path: pathlib.Path) -> str:
  parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
  return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict:
  return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imported(name: str, node, modules: dict) -> list:
  """The package modules an import statement in module `name` depends on."""
  if isinstance(node, ast.Import):
    targets = [alias.name for alias in node.names]
  else:
    if node.level:
      base = name.split(".")
      is_package = modules[name].name == "__init__.py"
      base = base if is_package else base[:-1]
      base = base[:len(base) - node.level + 1]
      source = ".".join(base + ([node.module] if node.module else []))
    else:
      source = node.module or ""
    # `from pkg import sub` depends on the submodule, not on pkg's __init__.
    subs = [f"{source}.{alias.name}" for alias in node.names]
    targets = [t for t in subs if t in modules] or [source]
  out = []
  for target in targets:
    while target and target not in modules:
      target = target.rpartition(".")[0]
    if target.startswith("xjax") and target != name:
      out.append(target)
  return out


def import_graph() -> dict:
  """Implementation module -> the implementation modules it imports (facades expanded)."""
  modules = _modules()
  direct = {name: set() for name in modules}
  for name, path in modules.items():
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
      if isinstance(node, (ast.Import, ast.ImportFrom)):
        direct[name].update(_imported(name, node, modules))

  def is_impl(m):
    return m.startswith("xjax._src.") or m == "xjax._src"

  def expand(name, seen):
    out = set()
    for target in direct[name]:
      if is_impl(target):
        out.add(target)
      elif target not in seen:
        seen.add(target)
        out |= expand(target, seen)
    return out

  return {m: expand(m, {m}) - {m} for m in modules if is_impl(m)}


def circles(graph: dict) -> list:
  """The strongly connected components of more than one module (Tarjan, iteratively)."""
  index, low, on_stack, stack, out = {}, {}, set(), [], []
  counter = 0
  for root in graph:
    if root in index:
      continue
    work = [(root, iter(sorted(graph[root])))]
    index[root] = low[root] = counter
    counter += 1
    stack.append(root)
    on_stack.add(root)
    while work:
      node, children = work[-1]
      child = next(children, None)
      if child is not None:
        if child not in index:
          index[child] = low[child] = counter
          counter += 1
          stack.append(child)
          on_stack.add(child)
          work.append((child, iter(sorted(graph[child]))))
        elif child in on_stack:
          low[node] = min(low[node], index[child])
        continue
      work.pop()
      if work:
        low[work[-1][0]] = min(low[work[-1][0]], low[node])
      if low[node] == index[node]:
        component = []
        while True:
          member = stack.pop()
          on_stack.discard(member)
          component.append(member)
          if member == node:
            break
        if len(component) > 1:
          out.append(sorted(component))
  return out


def _folder(module: str) -> pathlib.Path:
  return _modules()[module].parent


def test_import_circles_stay_inside_one_folder():
  crossing = [c for c in circles(import_graph()) if len({_folder(m) for m in c}) > 1]
  assert not crossing, (
      "import circles across folders (move the code that closes the circle down, or "
      f"register it from above; see docs/architecture.md): {crossing}")


def test_no_file_is_longer_than_the_budget():
  long = {str(p.relative_to(PACKAGE.parent)): n for p in PACKAGE.rglob("*.py")
          if (n := len(p.read_text().splitlines())) > MAX_LINES}
  assert not long, f"files over {MAX_LINES} lines (split them by job): {long}"


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b"}, "b": {"a"}, "c": set()}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
])
def test_the_circle_finder_finds_circles(graph, expected):
  assert circles(graph) == expected


def test_a_deferred_import_counts(tmp_path, monkeypatch):
  pkg = tmp_path / "xjax"
  (pkg / "_src" / "lax").mkdir(parents=True)
  (pkg / "__init__.py").write_text("")
  (pkg / "_src" / "__init__.py").write_text("")
  (pkg / "_src" / "lax" / "__init__.py").write_text("")
  (pkg / "_src" / "dispatch.py").write_text("def f():\n  from xjax._src.lax import ops\n")
  (pkg / "_src" / "lax" / "ops.py").write_text("from xjax._src import dispatch\n")
  monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
  found = circles(import_graph())
  assert found == [["xjax._src.dispatch", "xjax._src.lax.ops"]]
  assert len({_folder(m) for m in found[0]}) == 2
