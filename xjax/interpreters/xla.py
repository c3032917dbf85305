"""Mirrors `jax.interpreters.xla`: `apply_primitive` runs a primitive eagerly (compiled
once per primitive, params and operand types)."""
from xjax._src.dispatch import apply_primitive as _apply_primitive


def apply_primitive(prim, *args, **params):
  """Evaluates ``prim.bind(*args, **params)`` on concrete arrays by compiling the one
  primitive (mirrors `jax.interpreters.xla.apply_primitive`)."""
  return _apply_primitive(prim, args, params)
