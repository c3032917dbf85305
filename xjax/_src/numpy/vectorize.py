"""`jnp.vectorize`: NumPy's vectorize and generalized ufuncs, built on vmap.

A signature such as ``"(n,m),(m,k)->(n,k)"`` names the core dimensions each
argument and output has at its end; the leading "loop" dimensions of the
arguments broadcast together. Each loop dimension becomes one `vmap`; an
argument whose loop dimension has size 1 (or is missing) is not mapped there
(``in_axes=None``) rather than broadcast in memory, and a loop dimension that
is 1 for every argument is added back to the outputs at the end.
"""
from __future__ import annotations

import functools
import re
import warnings

from xjax._src import tree_util
from xjax._src.config import config
from xjax._src.numpy import creation, lax_numpy
from xjax._src.numpy import util
from xjax._src.vmap import vmap

# The generalized-ufunc signature grammar (numpy.org: c-api.generalized-ufuncs).
_DIM_NAME = r"\w+"
_CORE_DIMS = rf"(?:{_DIM_NAME}(?:,{_DIM_NAME})*)?"
_ARGUMENT = rf"\({_CORE_DIMS}\)"
_ARGUMENT_LIST = rf"{_ARGUMENT}(?:,{_ARGUMENT})*"
_SIGNATURE = re.compile(rf"^{_ARGUMENT_LIST}->{_ARGUMENT_LIST}$")


def _parse_signature(signature: str):
  """The core dimension names of each input and each output, as lists of tuples."""
  if not _SIGNATURE.match(signature):
    raise ValueError(f"not a valid gufunc signature: {signature}")
  inputs, outputs = signature.split("->")
  return ([tuple(re.findall(_DIM_NAME, arg)) for arg in re.findall(_ARGUMENT, side)]
          for side in (inputs, outputs))


def _record_core_sizes(sizes: dict, shape, core_dims, context: str, *, is_input: bool) -> None:
  """Checks `shape`'s trailing dims against `core_dims`, adding new names to `sizes`."""
  if is_input and len(shape) < len(core_dims):
    raise ValueError(f"input with shape {tuple(shape)!r} does not have enough dimensions for all "
                     f"core dimensions {core_dims!r} {context}")
  if not is_input and len(shape) != len(core_dims):
    raise ValueError(f"output shape {tuple(shape)!r} does not match core dimensions "
                     f"{core_dims!r} {context}")
  core_shape = shape[len(shape) - len(core_dims):]
  for name, size in zip(core_dims, core_shape, strict=True):
    if sizes.setdefault(name, size) != size:
      raise ValueError(f"inconsistent size for core dimension {name!r}: {size!r} vs "
                       f"{sizes[name]!r} {context}")


def _check_outputs(out, sizes: dict, output_core_dims, context: str) -> None:
  if len(output_core_dims) > 1 and not isinstance(out, tuple):
    raise TypeError(f"output must be a tuple when multiple outputs are expected, got: {out!r}\n"
                    f"{context}")
  outs = out if isinstance(out, tuple) else (out,)
  if len(outs) != len(output_core_dims):
    raise TypeError(f"wrong number of output arguments: expected {len(output_core_dims)!r}, "
                    f"got {len(outs)!r} {context}")
  sizes = dict(sizes)
  for o, core_dims in zip(outs, output_core_dims, strict=True):
    _record_core_sizes(sizes, util.shape(o), core_dims, context, is_input=False)


def _rank_promotion_check(args, input_core_dims, signature) -> None:
  mode = config.jax_numpy_rank_promotion
  if mode == "allow":
    return
  ranks = {util.ndim(a) - len(c) for a, c in zip(args, input_core_dims, strict=True)
           if util.ndim(a) != 0}
  if len(ranks) > 1:
    msg = (f"operands with shapes {[util.shape(a) for a in args]} require rank promotion for "
           f"jnp.vectorize function with signature {signature}. Set the "
           "jax_numpy_rank_promotion config option to 'allow' to disable this message; for more "
           "information, see https://docs.jax.dev/en/latest/rank_promotion_warning.html.")
    if mode == "raise":
      raise ValueError(msg)
    warnings.warn(msg, stacklevel=3)


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
  """`pyfunc` made to broadcast over leading "loop" dimensions of its arguments, by vmap.

  Without `signature`, `pyfunc` sees scalar slices of the broadcast
  arguments. With one, each argument keeps its trailing core dimensions and
  only the leading dimensions are looped over (and broadcast together).

  Args:
    pyfunc: the function to vectorize. Without `signature` it may return any
      pytree of arrays; with one, an array, or a tuple of arrays for several
      outputs.
    excluded: positions (ints) and names (strs) of arguments passed to
      `pyfunc` unchanged, without vectorizing. A positional argument that is
      None is also passed unchanged.
    signature: a generalized-ufunc signature such as
      ``"(n,m),(m,k)->(n,k)"``; None means every argument and output is
      scalar (``"(),()->()"``).

  Returns:
    The vectorized function. Its outputs have the broadcast loop shape in
    front of each output's core dimensions. Non-excluded keyword arguments are
    vectorized too (after the positional ones, as NumPy does).

  Raises:
    TypeError: `excluded` holds something other than ints and strs (at
      once); when called: the wrong number of arguments for `signature`, or
      `pyfunc` returns the wrong number of outputs.
    ValueError: a negative position in `excluded` (at once); when called: an
      invalid signature, arguments lacking core dimensions, inconsistent core
      sizes, loop shapes that do not broadcast, or outputs whose shapes do
      not match their core dimensions.

  >>> import xjax.numpy as jnp
  >>> matvec = jnp.vectorize(jnp.dot, signature='(n,m),(m)->(n)')
  >>> matvec(jnp.ones((4, 2, 3)), jnp.ones(3)).shape
  (4, 2)

  Mirrors `jax.numpy.vectorize`, except that JAX silently drops non-excluded
  keyword arguments and fails on a None first argument.
  """
  if any(not isinstance(e, (str, int)) for e in excluded):
    raise TypeError("jax.numpy.vectorize can only exclude integer or string arguments, "
                    f"but excluded={excluded!r}")
  if any(isinstance(e, int) and e < 0 for e in excluded):
    raise ValueError(f"excluded={excluded!r} contains negative numbers")

  @functools.wraps(pyfunc)
  def wrapped(*args, **kwargs):
    context = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
    # Dynamic inputs, keyed by position or keyword name; everything else goes in unchanged.
    keys = [i for i in range(len(args)) if i not in excluded]
    keys += [name for name in kwargs if name not in excluded]
    values = [args[k] if isinstance(k, int) else kwargs[k] for k in keys]
    if signature is None:
      input_core_dims, output_core_dims = [()] * len(keys), None
    else:
      input_core_dims, output_core_dims = _parse_signature(signature)
      if len(input_core_dims) != len(keys):
        raise TypeError(f"wrong number of positional arguments: expected "
                        f"{len(input_core_dims)!r}, got {len(keys)!r} {context}")
    none_at = [i for i, v in enumerate(values) if v is None]
    if any(input_core_dims[i] for i in none_at):
      raise ValueError(f"Cannot pass None at locations {set(none_at)} with {signature=}")
    mapped = [i for i, v in enumerate(values) if v is not None]
    keys = [keys[i] for i in mapped]
    core_dims = [input_core_dims[i] for i in mapped]
    arrays = [creation.asarray(values[i]) for i in mapped]

    sizes: dict[str, int] = {}
    for a, dims in zip(arrays, core_dims, strict=True):
      _record_core_sizes(sizes, util.shape(a), dims, context, is_input=True)
    loop_shapes = [util.shape(a)[:util.ndim(a) - len(d)] for a, d in zip(arrays, core_dims)]
    loop_shape = util.broadcast_shapes(*loop_shapes)
    _rank_promotion_check(arrays, core_dims, signature)

    def core_fun(*leaves):
      call_args, call_kwargs = list(args), dict(kwargs)
      for k, leaf in zip(keys, leaves, strict=True):
        if isinstance(k, int):
          call_args[k] = leaf
        else:
          call_kwargs[k] = leaf
      out = pyfunc(*call_args, **call_kwargs)
      if output_core_dims is not None:
        _check_outputs(out, sizes, output_core_dims, context)
      return out

    # One vmap per loop dimension, the innermost dimension wrapped first; an argument
    # whose loop dimension is 1 or absent is unmapped there (its size-1 dims squeezed).
    fun, unit_dims = core_fun, []
    padded = [(1,) * (len(loop_shape) - len(s)) + tuple(s) for s in loop_shapes]
    for d in reversed(range(len(loop_shape))):
      in_axes = tuple(None if s[d] == 1 else 0 for s in padded)
      if all(ax is None for ax in in_axes):
        unit_dims.append(d)
      else:
        fun = vmap(fun, in_axes=in_axes)
    squeezed = [lax_numpy.squeeze(a, tuple(i for i, n in enumerate(s) if n == 1))
                for a, s in zip(arrays, loop_shapes, strict=True)]
    out = fun(*squeezed)
    if not unit_dims:
      return out
    return tree_util.tree_map(lambda o: lax_numpy.expand_dims(o, tuple(unit_dims)), out)

  return wrapped
