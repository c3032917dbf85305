"""Argument makers of JAX's test suite: ``rand_*(rng)`` returns ``maker(shape, dtype)``.

`rng` is a `numpy.random.RandomState` (a test's `self.rng()`). Each maker draws the values of
one distribution, converts them to `dtype` and shapes them as asked. A shape is a tuple, an
int (a vector), `NUMPY_SCALAR_SHAPE` (the maker returns a NumPy scalar of `dtype`) or
`PYTHON_SCALAR_SHAPE` (a Python scalar). The distributions are those of JAX's
`jax._src.test_util` (the suite's tolerances are tuned to them): `rand_default` is 3·N(0, 1),
`rand_positive` is 2·U(0, 1) + 1, and so on; complex dtypes get independent real and
imaginary draws.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from xjax._src import config
from xjax._src import dtypes as _dtypes


class ScalarShape:
  """A shape marker for a scalar argument (no dimensions; indexing it fails)."""

  def __len__(self):
    return 0

  def __getitem__(self, i):
    raise IndexError(f"index {i} out of range.")


class _NumpyScalar(ScalarShape):
  pass


class _PythonScalar(ScalarShape):
  pass


NUMPY_SCALAR_SHAPE = _NumpyScalar()
PYTHON_SCALAR_SHAPE = _PythonScalar()


def is_valid_shape(shape, dtype) -> bool:
  """False for a Python-scalar shape of a dtype that no Python scalar type has."""
  if shape == PYTHON_SCALAR_SHAPE:
    return np.dtype(dtype) == np.dtype(type(np.array(0, dtype=dtype).item()))
  return True


def _dims_of_shape(shape) -> tuple:
  if type(shape) in (list, tuple):
    return tuple(shape)
  if isinstance(shape, ScalarShape):
    return ()
  if np.ndim(shape) == 0:
    return (int(shape),)
  raise TypeError(type(shape))


def _cast_to_shape(value, shape, dtype):
  """`value` as the kind of argument `shape` asks for (array, NumPy or Python scalar)."""
  if shape is NUMPY_SCALAR_SHAPE:
    return np.dtype(dtype).type(value)
  if shape is PYTHON_SCALAR_SHAPE:
    return np.asarray(value).item()
  if np.shape(value) != _dims_of_shape(shape):
    raise ValueError(f"made a value of shape {np.shape(value)} for shape {shape}")
  return value


def dtype_str(dtype) -> str:
  return np.dtype(dtype).name


@functools.lru_cache(maxsize=256)
def _shape_dtype_string(shape, dtype) -> str:
  if shape is NUMPY_SCALAR_SHAPE:
    return dtype_str(dtype)
  if shape is PYTHON_SCALAR_SHAPE:
    return "py" + dtype_str(dtype)
  if type(shape) is tuple:
    return f"{dtype_str(dtype)}[{','.join(str(d) for d in shape)}]"
  if type(shape) is int:
    return f"{dtype_str(dtype)}[{shape},]"
  raise TypeError(type(shape))


def format_shape_dtype_string(shape, dtype) -> str:
  """The test-name form of an argument: ``float32[2,3]``, ``pyint64``, ``int32[4,]``."""
  if isinstance(shape, np.ndarray):
    return f"{dtype_str(dtype)}[{shape}]"
  return _shape_dtype_string(tuple(shape) if isinstance(shape, list) else shape, dtype)


def _is_unsigned(dtype) -> bool:
  return _dtypes.issubdtype(dtype, np.unsignedinteger)


def _is_complex(dtype) -> bool:
  return _dtypes.issubdtype(dtype, np.complexfloating)


def _draw(sample, shape, dtype, scale=1.0, post=None):
  """`scale * sample(*dims)` in `dtype` (absolute values for unsigned dtypes, an independent
  imaginary part for complex ones), passed through `post`, shaped for `shape`."""
  dims = _dims_of_shape(shape)

  def one():
    values = scale * np.asarray(sample(*dims))
    if _is_unsigned(dtype):
      values = np.abs(values)
    return np.asarray(values).astype(dtype)

  values = one() + 1j * one() if _is_complex(dtype) else one()
  if post is not None:
    values = post(values)
  return _cast_to_shape(np.asarray(values, dtype), shape, dtype)


def _maker(sample, scale=1.0, post=None):
  def maker(shape, dtype, post=post):
    return _draw(sample, shape, dtype, scale, post)
  return maker


def rand_default(rng, scale=3):
  """Normal values times `scale`."""
  return _maker(rng.randn, scale)


def rand_nonzero(rng):
  """Normal values times 3, with exact zeros replaced by one."""
  return _maker(rng.randn, 3, lambda x: np.where(x == 0, np.array(1, x.dtype), x))


def rand_positive(rng):
  """Uniform values in [1, 3)."""
  return _maker(rng.rand, 2, lambda x: x + 1)


def rand_small(rng):
  """Normal values times 1e-3."""
  return _maker(rng.randn, 1e-3)


def rand_not_small(rng, offset=10.0):
  """Normal values times 3, pushed `offset` away from zero."""
  return _maker(rng.randn, 3.0, lambda x: x + np.where(x > 0, offset, -offset))


def rand_small_positive(rng):
  """Uniform values in [0, 2e-5)."""
  return _maker(rng.rand, 2e-5)


def rand_uniform(rng, low=0.0, high=1.0):
  """Uniform values in [low, high)."""
  if not low < high:
    raise ValueError(f"rand_uniform needs low < high, got {low} and {high}")
  return _maker(rng.rand, 1.0, lambda x: x * (high - low) + low)


def rand_some_equal(rng):
  """Normal values times 100, about half of them equal to the first."""
  def post(x):
    flat = x.ravel()
    if flat.size == 0:
      return x
    return np.where(rng.rand(*np.shape(x)) < 0.5, flat[0], x)
  return _maker(rng.randn, 100.0, post)


def rand_fullrange(rng, standardize_nans=False):
  """Uniformly random bits: every value of the dtype, NaNs and infinities included."""
  def maker(shape, dtype, post=lambda x: x):
    dtype = np.dtype(dtype)
    dims = _dims_of_shape(shape)
    raw = rng.randint(0, np.iinfo(np.uint8).max, size=dtype.itemsize * math.prod(dims),
                      dtype=np.uint8)
    values = post(raw).view(dtype)
    if shape is PYTHON_SCALAR_SHAPE:
      # A Python int from the top of the widest unsigned range overflows JAX's int types.
      if dtype == np.uint64:
        values = values.astype(np.int64)
      elif dtype == np.uint32 and not config.enable_x64.value:
        values = values.astype(np.int32)
    values = values.reshape(dims)
    if standardize_nans and np.issubdtype(dtype, np.floating):
      values[np.isnan(values)] = np.nan
    return _cast_to_shape(values, shape, dtype)
  return maker


def _with_specials(rng, specials):
  """Normal values times 3 in which each of `specials` ((value, probability) pairs, applied in
  order) replaces a random subset; for non-float dtypes the plain normal values."""
  base = rand_default(rng)

  def maker(shape, dtype):
    if _is_complex(dtype):
      part = np.real(np.array(0, dtype=dtype)).dtype
      with np.errstate(invalid="ignore"):  # inf * 1j has a NaN real part, as in JAX's
        out = maker(shape, part) + np.array(1j, dtype) * maker(shape, part)
      return _cast_to_shape(np.asarray(out, dtype), shape, dtype)
    if not _dtypes.issubdtype(dtype, np.floating):
      return base(shape, dtype)
    dims = _dims_of_shape(shape)
    masks = [rng.rand(*dims) < p for _, p in specials]
    values = base(shape, dtype)
    for (special, _), mask in zip(specials, masks):
      values = np.where(mask, np.array(special, dtype=dtype), values)
    return _cast_to_shape(np.asarray(values, dtype=dtype), shape, dtype)
  return maker


def rand_some_inf(rng):
  """`rand_default` values with about 10% +inf and 10% -inf (float dtypes)."""
  return _with_specials(rng, [(np.inf, 0.1), (-np.inf, 0.1)])


def rand_some_inf_and_nan(rng):
  """`rand_default` values with about 10% each of +inf, -inf and NaN (float dtypes)."""
  return _with_specials(rng, [(np.inf, 0.1), (-np.inf, 0.1), (np.nan, 0.1)])


def rand_some_nan(rng):
  """`rand_default` values with about 10% NaN, half of them negative NaN (float dtypes)."""
  base = rand_default(rng)

  def maker(shape, dtype):
    if _is_complex(dtype):
      part = np.real(np.array(0, dtype=dtype)).dtype
      out = maker(shape, part) + np.array(1j, dtype) * maker(shape, part)
      return _cast_to_shape(np.asarray(out, dtype), shape, dtype)
    if not _dtypes.issubdtype(dtype, np.floating):
      return base(shape, dtype)
    u = rng.rand(*_dims_of_shape(shape))
    values = base(shape, dtype)
    values = np.where(u < 0.1, np.array(np.nan, dtype=dtype), values)
    values = np.where(u < 0.05, np.array(-np.nan, dtype=dtype), values)
    return _cast_to_shape(np.asarray(values, dtype=dtype), shape, dtype)
  return maker


def rand_some_zero(rng):
  """`rand_default` values, about half of them zero."""
  base = rand_default(rng)

  def maker(shape, dtype):
    zeros = rng.rand(*_dims_of_shape(shape)) < 0.5
    values = np.where(zeros, np.array(0, dtype=dtype), base(shape, dtype))
    return _cast_to_shape(np.asarray(values, dtype=dtype), shape, dtype)
  return maker


def rand_int(rng, low=0, high=None):
  """Integers in [low, high) (`high` defaults to the integer dtype's maximum)."""
  def maker(shape, dtype):
    integer = np.issubdtype(dtype, np.integer)
    top = high
    if low == 0 and top is None:
      if not integer:
        raise ValueError("rand_int requires an explicit `high` value for non-integer types.")
      top = np.iinfo(dtype).max
    draw_dtype = dtype if integer else np.int64
    return rng.randint(low, high=top, size=shape, dtype=draw_dtype).astype(dtype)
  return maker


def rand_unique_int(rng, high=None):
  """Distinct integers in [0, high) (`high` defaults to the number of elements)."""
  def maker(shape, dtype):
    pool = np.arange(high or math.prod(shape), dtype=dtype)
    return rng.choice(pool, size=shape, replace=False)
  return maker


def rand_indices_unique_along_axis(rng):
  """``maker(dim, shape, axis, allow_negative=True)``: indices into a dimension of size `dim`,
  distinct along `axis`; with `allow_negative`, a random half written as negative indices."""
  def maker(dim, shape, axis, allow_negative=True):
    shape = tuple(shape)
    others = shape[:axis] + shape[axis + 1:]
    rows = [rng.choice(dim, size=shape[axis], replace=False)
            for _ in range(math.prod(others))]
    idx = np.array(rows).reshape(others + (shape[axis],))
    idx = np.moveaxis(idx, -1, axis)
    if allow_negative:
      negate = rng.choice([False, True], idx.shape)
      idx[negate] -= dim
    return idx
  return maker


def rand_bool(rng):
  """Booleans, each True with probability one half."""
  def maker(shape, dtype):
    values = np.asarray(rng.rand(*_dims_of_shape(shape)) < 0.5, dtype=dtype)
    return _cast_to_shape(values, shape, dtype)
  return maker


def rand_like(rng, x):
  """Random values of `x`'s shape and dtype (normal; complex gets both parts)."""
  shape, dtype = np.shape(x), _dtypes.dtype(x) if hasattr(x, "dtype") else np.result_type(x)
  values = rng.randn(*shape)
  if _is_complex(dtype):
    values = values + 1j * rng.randn(*shape)
  return np.asarray(values, dtype)


def complex_plane_sample(dtype, size_re=10, size_im=None):
  """A grid of complex numbers of `dtype` covering the plane: shape
  ``(3 + 2*size_im, 3 + 2*size_re)``. Each axis holds -inf, `size` negative values spaced
  logarithmically from the dtype's largest magnitude (exactly `finfo.min`) down to its smallest
  normal (exactly `-finfo.tiny`), zero, the mirror image, and +inf."""
  if size_im is None:
    size_im = size_re
  finfo = np.finfo(dtype)
  part = finfo.dtype
  digits_per_bit = 3.3219280948873626  # log2(10): exponents in base 2 to decimal exponents

  def axis_points(size):
    points = np.zeros(3 + 2 * size, dtype=part)
    with np.errstate(over="ignore"):
      negative = -np.logspace(finfo.maxexp / digits_per_bit, finfo.minexp / digits_per_bit,
                              size, dtype=part)
    points[1:size + 1] = negative
    points[size + 2:-1] = -negative[::-1]
    if size > 1:
      points[1], points[-2] = finfo.min, finfo.max
    if size > 0:
      points[size], points[-size - 1] = -finfo.tiny, finfo.tiny
    points[0], points[-1] = -np.inf, np.inf
    return points

  real = np.broadcast_to(axis_points(size_re), (3 + 2 * size_im, 3 + 2 * size_re))
  imag = np.broadcast_to(axis_points(size_im)[:, None], real.shape)
  out = np.empty(real.shape, dtype)
  out.real, out.imag = real, imag
  return out
