"""The types shared by the stages of ahead-of-time compilation (mirrors `jax._src.stages`).

``jit(f)`` is a `Wrapped`; ``jit(f).trace(*args)`` a `Traced` (the jaxpr),
``.lower()`` a `Lowered` (the StableHLO module), ``.compile()`` a `Compiled` (the
executable). The three stage classes live in `xjax._src.jit_stages`; they derive from
`Stage` here, which describes their arguments by `ArgInfo`s.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Protocol, Union, runtime_checkable

from xjax._src import core
from xjax._src import tree_util

# XLA compiler options: option name -> value (`Lowered.compile`, `jit(compiler_options=)`).
CompilerOptions = dict[str, Union[str, bool]]


@dataclasses.dataclass(frozen=True, slots=True)
class ArgInfo:
  """One argument leaf of a stage: its aval and whether its buffer is donated.

  Mirrors `jax.stages.ArgInfo`; `shape` and `dtype` read the aval.
  """
  _aval: core.ShapedArray
  donated: bool

  @property
  def shape(self):
    if not hasattr(self._aval, "shape"):
      raise TypeError(f"No shape attribute with aval of type {type(self._aval)}")
    return self._aval.shape

  @property
  def dtype(self):
    if not hasattr(self._aval, "dtype"):
      raise TypeError(f"No dtype attribute with aval of type {type(self._aval)}")
    return self._aval.dtype


def make_args_info(in_tree, in_avals, donate_mask) -> Any:
  """A pytree (of `in_tree`'s structure, ``(args, kwargs)``) of `ArgInfo`s, one per leaf.

  `donate_mask` is one bool per leaf, or None when nothing is donated.
  """
  donated = donate_mask if donate_mask is not None else (False,) * len(in_avals)
  return in_tree.unflatten([ArgInfo(a, bool(d))
                            for a, d in zip(in_avals, donated, strict=True)])


class Stage:
  """What the stages share: `args_info` (a pytree of `ArgInfo`), and from it `in_tree`,
  `in_avals` and `donate_argnums` (mirrors `jax._src.stages.Stage`)."""
  args_info: Any

  @property
  def in_tree(self) -> tree_util.PyTreeDef:
    """The treedef of the pair (positional arguments, keyword arguments)."""
    return tree_util.tree_structure(self.args_info, is_leaf=_is_arg_info)

  @property
  def in_avals(self):
    """The avals of the arguments, as a pytree of `in_tree`'s structure."""
    return tree_util.tree_map(lambda x: x._aval, self.args_info, is_leaf=_is_arg_info)

  @property
  def donate_argnums(self) -> tuple[int, ...]:
    """The flat indices of the donated argument leaves."""
    return tuple(i for i, x in enumerate(tree_util.tree_leaves(self.args_info,
                                                               is_leaf=_is_arg_info))
                 if x.donated)


def _is_arg_info(x) -> bool:
  return type(x) is ArgInfo


@runtime_checkable
class Wrapped(Protocol):
  """A function ready to be traced, lowered and compiled: what `xjax.jit` returns.

  Calling it compiles just in time (once per argument signature) and runs;
  ``trace(*args)`` and ``lower(*args)`` stage it explicitly ahead of time. A
  runtime-checkable protocol, as in JAX: ``isinstance(jax.jit(f), jax.stages.Wrapped)``
  holds. Mirrors `jax.stages.Wrapped`.
  """

  def __call__(self, *args, **kwargs):
    """Runs the function, tracing, lowering and compiling as needed."""
    raise NotImplementedError

  def trace(self, *args, **kwargs):
    """The `Traced` stage for these arguments (the function staged out to a jaxpr)."""
    raise NotImplementedError

  def lower(self, *args, **kwargs):
    """The `Lowered` stage for these arguments: ``self.trace(*args, **kwargs).lower()``."""
    raise NotImplementedError
