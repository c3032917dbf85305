"""Image resampling (mirrors `jax.image`): separable kernels as weight matrices contracted
with the image by `dot_general`; nearest-neighbour resizing by gathers."""
from __future__ import annotations

import enum
import itertools

import numpy as np

import xjax.numpy as jnp
from xjax._src import core, dtypes
from xjax._src.jit import jit
from xjax._src.lax import reductions, structural
from xjax._src.lax.dot import Precision, dot_general
from xjax._src.numpy.util import canonicalize_axis, promote_dtypes_inexact


# ----------------------------------------------------------------------------
# Kernels: functions of the distance |x| between a sample and an input pixel centre


def _lanczos_kernel(radius, x):
  y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
  # y / (pi^2 x^2), with its limit 1 near x = 0
  out = jnp.where(x > 1e-3, jnp.divide(y, jnp.where(x != 0, np.pi**2 * x**2, 1)), 1)
  return jnp.where(x > radius, 0., out)


def _keys_cubic_kernel(x):
  # Keys' cubic convolution kernel with a = -0.5 (Keys 1981); Pillow, TensorFlow and
  # PyTorch with antialiasing use it.
  out = ((1.5 * x - 2.5) * x) * x + 1.
  out = jnp.where(x >= 1., ((-0.5 * x + 2.5) * x - 4.) * x + 2., out)
  return jnp.where(x >= 2., 0., out)


def _opencv_cubic_kernel(x):
  # The a = -0.75 cubic of OpenCV, used by PyTorch without antialiasing.
  a = -0.75
  out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
  out = jnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
  return jnp.where(x >= 2.0, 0.0, out)


def _triangle_kernel(x):
  return jnp.maximum(0, 1 - jnp.abs(x))


_AREA = object()  # marks the box (pixel-overlap) kernel, computed from interval ends


def _normalize_columns(weights):
  """Each column divided by its sum; columns summing to ~0 become 0."""
  total = jnp.sum(weights, axis=0, keepdims=True)
  return jnp.where(jnp.abs(total) > 1000. * float(np.finfo(np.float32).eps),
                   jnp.divide(weights, jnp.where(total != 0, total, 1)), 0)


def compute_weight_mat(input_size, output_size, scale, translation, kernel, antialias,
                       edge_padding, radius):
  """The [input_size, output_size] matrix resampling one axis: out = w.T @ in."""
  dtype = dtypes.result_type(scale, translation)
  inv_scale = 1. / scale
  # Downsampling with antialiasing widens the kernel (a low-pass filter); upsampling
  # only interpolates.
  kernel_scale = jnp.maximum(inv_scale, 1.) if antialias else 1.
  # The input coordinate of each output pixel's centre.
  sample_f = ((jnp.arange(output_size, dtype=dtype) + 0.5) * inv_scale
              - translation * inv_scale - 0.5)
  # Edge padding (reached only without antialiasing) evaluates `radius` extra pixels on
  # each side, whose weight is then moved onto the edge pixels.
  k = radius if edge_padding else 0
  expanded = jnp.arange(-k, input_size + k, dtype=dtype)
  if kernel is _AREA:
    # Overlap length of output pixel i's interval (mapped back) with input pixel j's.
    left_out = jnp.arange(output_size, dtype=dtype) * inv_scale - translation * inv_scale
    right_out = left_out + inv_scale
    left_in = jnp.arange(input_size, dtype=dtype)
    right_in = left_in + 1.0
    weights = jnp.maximum(0.0, jnp.minimum(right_out[np.newaxis, :], right_in[:, np.newaxis])
                          - jnp.maximum(left_out[np.newaxis, :], left_in[:, np.newaxis]))
  else:
    x = jnp.abs(sample_f[np.newaxis, :] - expanded[:, np.newaxis])
    weights = kernel(x / kernel_scale)

  if edge_padding:
    clamped = jnp.clip(expanded.astype(jnp.int32), 0, input_size - 1)
    columns = jnp.arange(output_size)
    weight_mat = jnp.zeros((input_size, output_size), dtype=dtype)
    columns = structural.broadcast_in_dim(columns, (expanded.shape[0], output_size), (1,))
    return _normalize_columns(weight_mat.at[clamped[:, np.newaxis], columns].add(weights))
  weights = _normalize_columns(weights)
  # Samples falling wholly outside the input get no weight at all.
  inside = jnp.logical_and(sample_f >= -0.5, sample_f <= input_size - 0.5)
  return jnp.where(inside[np.newaxis, :], weights, 0)


# ----------------------------------------------------------------------------
# Contraction of the image with the weight matrices, in the order and orientation
# that JAX's einsum (opt_einsum's 'optimal' path) uses, so jaxprs and rounding match.


def _optimal_path(inputs, output, sizes):
  """Pairwise contraction order (SSA ids) of least flop count, opt_einsum's count."""
  def size(labels):
    return int(np.prod([sizes[c] for c in labels], dtype=np.int64))

  best = {"flops": float("inf"), "path": None}

  def search(path, remaining, inputs, flops):
    if len(remaining) == 1:
      best["flops"], best["path"] = flops, path
      return
    for i, j in itertools.combinations(sorted(remaining), 2):
      keep = output.union(*(inputs[r] for r in remaining - {i, j}))
      either, shared = inputs[i] | inputs[j], inputs[i] & inputs[j]
      cost = size(either) * (2 if shared - keep else 1)
      if flops + cost >= best["flops"]:
        continue
      search(path + ((i, j),), remaining - {i, j} | {len(inputs)},
             inputs + (either & keep,), flops + cost)

  search((), frozenset(range(len(inputs))), tuple(map(frozenset, inputs)), 0)
  return best["path"]


def _contract_pair(lhs, lhs_names, rhs, rhs_names, removed, result_names, precision):
  ops = [[lhs, lhs_names], [rhs, rhs_names]]
  for op, other in ((ops[0], ops[1]), (ops[1], ops[0])):
    # labels summed away that only this operand has
    uniques = [n for n in sorted(removed) if n in op[1] and n not in other[1]]
    if uniques:
      op[0] = reductions.reduce_sum(op[0], tuple(op[1].index(n) for n in uniques))
      op[1] = "".join(n for n in op[1] if n not in uniques)
  (lhs, lhs_names), (rhs, rhs_names) = ops
  both = set(lhs_names) & set(rhs_names)
  contracted = [n for n in sorted(removed) if n in both]
  batch = "".join(n for n in result_names if n in both)
  lhs_batch = tuple(lhs_names.index(n) for n in batch)
  rhs_batch = tuple(rhs_names.index(n) for n in batch)
  lhs_cont = tuple(lhs_names.index(n) for n in contracted)
  rhs_cont = tuple(rhs_names.index(n) for n in contracted)
  lhs_free = "".join(n for n in lhs_names if n not in both)
  rhs_free = "".join(n for n in rhs_names if n not in both)
  # JAX tries (rhs, lhs) first, hoping to skip a transpose.
  names = batch + rhs_free + lhs_free
  if names == result_names:
    out = dot_general(rhs, lhs, ((rhs_cont, lhs_cont), (rhs_batch, lhs_batch)), precision,
                      preferred_element_type=lhs.dtype)
  else:
    names = batch + lhs_free + rhs_free
    out = dot_general(lhs, rhs, ((lhs_cont, rhs_cont), (lhs_batch, rhs_batch)), precision,
                      preferred_element_type=lhs.dtype)
  if names != result_names:
    out = structural.transpose(out, tuple(names.index(n) for n in result_names))
  return out


def _contract(operands, labels, output, precision):
  """einsum(*interleaved(operands, labels), output) with JAX's pairwise steps.

  JAX takes opt_einsum's 'optimal' path up to 4 operands (3 spatial axes); beyond that
  opt_einsum's branch search may pick another order, giving the same values up to
  rounding.
  """
  sizes = {c: d for op, ls in zip(operands, labels) for c, d in zip(ls, op.shape)}
  ssa_path = _optimal_path(labels, frozenset(output), sizes)
  operands, labels = list(operands), list(labels)
  num_inputs = len(operands)
  ssa_ids = list(range(num_inputs))  # the SSA id of each live operand
  for step, pair in enumerate(ssa_path):
    # the higher position is popped first and becomes the lhs, as in opt_einsum
    i, j = sorted((ssa_ids.index(s) for s in pair), reverse=True)
    lhs, lhs_names = operands.pop(i), labels.pop(i)
    rhs, rhs_names = operands.pop(j), labels.pop(j)
    del ssa_ids[i], ssa_ids[j]
    keep = set(output).union(*labels)
    if step == len(ssa_path) - 1:
      result = output
    else:  # opt_einsum orders an intermediate's labels by first appearance in its inputs
      both = lhs_names + rhs_names
      result = "".join(sorted(set(both) & keep, key=both.find))
    removed = (set(lhs_names) | set(rhs_names)) - keep
    operands.append(_contract_pair(lhs, lhs_names, rhs, rhs_names, removed, result,
                                   precision))
    labels.append(result)
    ssa_ids.append(num_inputs + step)
  return operands[0]


_SYMBOLS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"  # opt_einsum's labels


def _scale_and_translate(x, output_shape, spatial_dims, scale, translation, kernel,
                         antialias, precision, edge_padding=False, radius=None):
  """Resamples each axis in `spatial_dims` with a weight matrix; edge_padding repeats the
  edge pixels instead of giving off-image samples zero weight."""
  if len(x.shape) != len(output_shape) or not len(spatial_dims) == len(scale) == len(translation):
    raise AssertionError("one scale and one translation per spatial dimension are needed")
  if len(spatial_dims) == 0:
    return x
  rank = len(output_shape)
  operands, labels = [x], [_SYMBOLS[:rank]]
  out_labels = list(_SYMBOLS[:rank])
  for i, d in enumerate(spatial_dims):
    d = canonicalize_axis(d, x.ndim)
    w = compute_weight_mat(x.shape[d], output_shape[d], scale[i], translation[i], kernel,
                           antialias, edge_padding, radius).astype(x.dtype)
    operands.append(w)
    labels.append(_SYMBOLS[d] + _SYMBOLS[rank + i])
    out_labels[d] = _SYMBOLS[rank + i]
  return _contract(operands, labels, "".join(out_labels), precision)


class ResizeMethod(enum.Enum):
  """Image resize method.

  NEAREST: nearest-neighbour interpolation. LINEAR: linear interpolation (a triangle
  kernel). LANCZOS3, LANCZOS5: Lanczos resampling of radius 3 and 5. CUBIC: cubic
  interpolation with Keys' kernel (a = -0.5). CUBIC_PYTORCH: PyTorch's bicubic (the
  a = -0.75 kernel with edge padding when not antialiasing; CUBIC otherwise). AREA: the
  average over each output pixel's area (a box filter).

  Mirrors `jax.image.ResizeMethod`.
  """
  NEAREST = 0
  LINEAR = 1
  LANCZOS3 = 2
  LANCZOS5 = 3
  CUBIC = 4
  CUBIC_PYTORCH = 5
  AREA = 6

  @staticmethod
  def from_string(s: str):
    """The method a name stands for ('linear', 'bilinear', 'bicubic', 'lanczos3', ...).

    Raises:
      ValueError: an unknown name.
    """
    for method, names in _METHOD_NAMES.items():
      if s in names:
        return method
    raise ValueError(f'Unknown resize method "{s}"')


_METHOD_NAMES = {
    ResizeMethod.NEAREST: ("nearest",),
    ResizeMethod.LINEAR: ("linear", "bilinear", "trilinear", "triangle"),
    ResizeMethod.LANCZOS3: ("lanczos3",),
    ResizeMethod.LANCZOS5: ("lanczos5",),
    ResizeMethod.CUBIC: ("cubic", "bicubic", "tricubic"),
    ResizeMethod.CUBIC_PYTORCH: ("cubic-pytorch", "bicubic-pytorch"),
    ResizeMethod.AREA: ("area",),
}

_KERNELS = {  # method: (radius, kernel)
    ResizeMethod.LINEAR: (1, _triangle_kernel),
    ResizeMethod.LANCZOS3: (3, lambda x: _lanczos_kernel(3., x)),
    ResizeMethod.LANCZOS5: (5, lambda x: _lanczos_kernel(5., x)),
    ResizeMethod.CUBIC: (2, _keys_cubic_kernel),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic_kernel),
    ResizeMethod.AREA: (1, _AREA),
}


def _check_rank(shape, image):
  if len(shape) != image.ndim:
    raise ValueError("shape must have length equal to the number of dimensions of x; "
                     f" {shape} vs {image.shape}")


def _kernel_for(method, antialias):
  """(radius, kernel, edge_padding) of a non-nearest method."""
  if not isinstance(method, ResizeMethod):
    raise AssertionError(f"not a ResizeMethod: {method!r}")
  if method == ResizeMethod.CUBIC_PYTORCH and antialias:
    method = ResizeMethod.CUBIC
  radius, kernel = _KERNELS[method]
  return radius, kernel, method == ResizeMethod.CUBIC_PYTORCH


def scale_and_translate(image, shape, spatial_dims, scale, translation, method,
                        antialias=True, precision=Precision.HIGHEST):
  """Resamples `image` under the map x -> x * scale + translation of its spatial axes.

  Output pixel centres are mapped back by the inverse warp into the input, whose pixel
  ``i`` has its centre at ``i + 0.5``; output pixels whose centre maps outside the input
  are zero (except with CUBIC_PYTORCH without antialiasing, which repeats the edges).
  PyTorch's ``align_corners=True`` is ``scale = (n - 1) / (m - 1)``,
  ``translation = 0.5 * (1 - scale)``.

  Args:
    image: an array; integer and bool images are promoted to float.
    shape: the output shape, of length ``image.ndim``.
    spatial_dims: the K axes to resample.
    scale, translation: length-K arrays (or sequences) of per-axis scales and shifts.
    method: a `ResizeMethod` other than NEAREST, or its name ("linear", "bilinear",
      "trilinear", "triangle", "cubic", "bicubic", "tricubic", "cubic-pytorch",
      "bicubic-pytorch", "lanczos3", "lanczos5", "area").
    antialias: widen the kernel when downsampling (a low-pass filter). Default True.
    precision: the `dot_general` precision of the contractions (default HIGHEST).

  Returns:
    An array of `shape` and the image's (inexact) dtype.

  Raises:
    ValueError: `shape` has the wrong length, the method name is unknown, or the
      method is nearest (not supported here).

  Mirrors `jax.image.scale_and_translate`.
  """
  shape = core.canonicalize_shape(shape)
  _check_rank(shape, image)
  if isinstance(method, str):
    method = ResizeMethod.from_string(method)
  if method == ResizeMethod.NEAREST:
    raise ValueError("Nearest neighbor resampling is not currently supported "
                     "for scale_and_translate.")
  radius, kernel, edge_padding = _kernel_for(method, antialias)
  image, = promote_dtypes_inexact(image)
  scale, translation = promote_dtypes_inexact(scale, translation)
  return _scale_and_translate(image, shape, spatial_dims, scale, translation, kernel,
                              antialias, precision, edge_padding=edge_padding,
                              radius=radius)


def _resize_nearest(x, output_shape):
  for d, (m, n) in enumerate(zip(x.shape, output_shape)):
    if m == n:
      continue
    # float32 even under x64, as JAX (float64 gave wrong indices on some backends)
    offsets = (jnp.arange(n, dtype=np.float32) + 0.5) * m / n
    offsets = jnp.floor(offsets.astype(np.float32)).astype(np.int32)
    index = [slice(None)] * x.ndim
    index[d] = offsets
    x = x[tuple(index)]
  return x


@jit(static_argnums=(1, 2, 3, 4))
def _resize(image, shape, method, antialias, precision):
  _check_rank(shape, image)
  if isinstance(method, str):
    method = ResizeMethod.from_string(method)
  if method == ResizeMethod.NEAREST:
    return _resize_nearest(image, shape)
  radius, kernel, edge_padding = _kernel_for(method, antialias)
  image, = promote_dtypes_inexact(image)
  # Axes of unchanged size are skipped: every kernel interpolates, so the identity warp
  # gives the input back.
  spatial_dims = tuple(d for d in range(len(shape)) if image.shape[d] != shape[d])
  scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in spatial_dims]
  return _scale_and_translate(image, shape, spatial_dims, scale, [0.] * len(spatial_dims),
                              kernel, antialias, precision, edge_padding=edge_padding,
                              radius=radius)


def resize(image, shape, method, antialias=True, precision=Precision.HIGHEST):
  """Resizes `image` to `shape` by resampling every axis whose size changes.

  Batch and channel axes are just axes whose size stays the same. NEAREST keeps the
  dtype and ignores `antialias` and `precision`; the other methods promote integer and
  bool images to float. There is no ``align_corners``: use `scale_and_translate`.

  Args:
    image: an array.
    shape: the output shape, of length ``image.ndim`` (all axes, batch ones included).
    method: a `ResizeMethod` or its name: "nearest", "linear" / "bilinear" /
      "trilinear" / "triangle", "cubic" / "bicubic" / "tricubic", "cubic-pytorch" /
      "bicubic-pytorch", "lanczos3", "lanczos5", "area".
    antialias: widen the kernel when downsampling (a low-pass filter). Default True;
      no effect when upsampling.
    precision: the `dot_general` precision of the contractions (default HIGHEST).

  Returns:
    The resized array, of `shape`.

  Raises:
    ValueError: `shape` has the wrong length, or the method name is unknown.
    TypeError: `shape` is not a sequence of integers.

  Mirrors `jax.image.resize`.
  """
  return _resize(image, core.canonicalize_shape(shape), method, antialias, precision)
