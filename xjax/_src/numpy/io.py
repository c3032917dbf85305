"""Text, bytes and files: array_str/array_repr, print options, load/save, frombuffer,
fromstring, from_dlpack; fromiter and fromfile refuse, as in JAX (they consume
their input, which is not safe under transformations)."""
from __future__ import annotations

import numpy as np

from xjax._src import dtypes
from xjax._src.array import Array
from xjax._src.numpy import creation

# NumPy's own: they configure printing (which Array's repr follows) and write files.
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions
printoptions = np.printoptions
save = np.save
savez = np.savez

_IMPURE = ("jnp.{name}() is not implemented because it may be non-pure and thus unsafe for "
           "use with JIT and other JAX transformations. Consider using "
           "jnp.asarray(np.{name}(...)) instead, although care should be taken if np.{name} is "
           "used within a jax transformations because of its potential side-effect of "
           "consuming the {what} object; for more information see "
           "https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions")


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
  """NumPy's `array_str` of the values of `a` (mirrors `jax.numpy.array_str`)."""
  return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
  """NumPy's `array_repr` of `arr`'s values, named as xjax arrays print ("Array(...)").

  Mirrors `jax.numpy.array_repr`.
  """
  text = np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)
  return "Array" + text[len("array"):] if text.startswith("array") else text


def load(file, *args, **kwargs):
  """Loads a .npy file (or anything `numpy.load` reads) as an Array.

  Args:
    file: a path or a binary file object.
    *args, **kwargs: passed to `numpy.load`.

  Returns:
    An Array for a .npy file; `numpy.load`'s result unchanged otherwise (an
    .npz file's lazy mapping).

  Mirrors `jax.numpy.load`.
  """
  out = np.load(file, *args, **kwargs)
  if isinstance(out, np.ndarray):
    # NumPy does not know bfloat16: `np.save` writes it as 2-byte void, read back as such.
    if out.dtype == np.dtype("V2"):
      out = out.view(dtypes.bfloat16)
    try:
      return creation.asarray(out)
    except TypeError:  # a dtype JAX has no arrays of: NumPy's array, as JAX returns it
      return out
  return out


def frombuffer(buffer, dtype=float, count: int = -1, offset: int = 0):
  """An Array of the values in a bytes-like `buffer` (copied), read as `dtype`.

  Raises:
    ValueError: the buffer's size is not a multiple of the item size, or
      `count`/`offset` run past its end (NumPy's errors).

  Mirrors `jax.numpy.frombuffer`.
  """
  return creation.asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count: int = -1, *, sep: str):
  """An Array of the numbers in text `string`, separated by `sep`.

  Raises:
    ValueError: the text does not parse (NumPy's error).

  Mirrors `jax.numpy.fromstring`.
  """
  return creation.asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def from_dlpack(x, /, *, device=None, copy=None):
  """An Array with the values of a DLPack-exporting object (copied to the device).

  Args:
    x: an object with ``__dlpack__`` (a NumPy array, another library's tensor).
    device: an optional device to commit the result to.
    copy: accepted for the Array API signature; the values are always copied.

  Mirrors `jax.numpy.from_dlpack`.
  """
  if isinstance(x, Array):
    return x if device is None else creation.asarray(x, device=device)
  return creation.asarray(np.from_dlpack(x), device=device)


def fromiter(*args, **kwargs):
  """Refused, as in JAX: it consumes its iterable (use ``jnp.asarray(np.fromiter(...))``).

  Raises:
    NotImplementedError: always.

  Mirrors `jax.numpy.fromiter`.
  """
  raise NotImplementedError(_IMPURE.format(name="fromiter", what="iterable"))


def fromfile(*args, **kwargs):
  """Refused, as in JAX: it consumes its file (use ``jnp.asarray(np.fromfile(...))``).

  Raises:
    NotImplementedError: always.

  Mirrors `jax.numpy.fromfile`.
  """
  raise NotImplementedError(_IMPURE.format(name="fromfile", what="file"))
