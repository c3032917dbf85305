"""xjax.scipy.integrate.trapezoid, xjax.scipy.interpolate.RegularGridInterpolator and
xjax.scipy.ndimage.map_coordinates against SciPy: values (edges, out of range, NaN),
dtypes, jit and vmap against eager, gradients against finite differences, errors."""
import numpy as np
import pytest
import scipy.integrate as osp_integrate
import scipy.interpolate as osp_interpolate
import scipy.ndimage as osp_ndimage

import xjax
import xjax.numpy as jnp
from xjax.scipy.integrate import trapezoid
from xjax.scipy.interpolate import RegularGridInterpolator
from xjax.scipy.ndimage import map_coordinates
from xjax.test_util import check_grads

# ----------------------------------------------------------------------------
# integrate.trapezoid


@pytest.mark.parametrize("shape,axis", [((7,), -1), ((4, 6), 0), ((3, 5, 2), 1), ((3, 1), 1),
                                        ((0, 3), 0)])
def test_trapezoid_matches_scipy(shape, axis, rng, x64):
  y = rng.normal(size=shape)
  x_1d = np.sort(rng.uniform(-2, 3, size=shape[axis]))
  x_full = np.sort(rng.uniform(-2, 3, size=shape), axis=axis)
  for args in [dict(), dict(dx=0.25), dict(x=x_1d), dict(x=x_full)]:
    if shape[axis] == 0 and "x" not in args:  # JAX 0.10.2 indexes the (missing) ends
      with pytest.raises(IndexError, match="out of bounds"):
        trapezoid(y, axis=axis, **args)
      continue
    np.testing.assert_allclose(trapezoid(y, axis=axis, **args),
                               osp_integrate.trapezoid(y, axis=axis, **args), rtol=1e-13, atol=1e-14)


def test_trapezoid_dtypes_and_edge_values(x64):
  assert trapezoid(np.array([1, 2, 3, 2, 3, 2, 1])) == 13.0
  assert trapezoid(np.array([1, 2, 3, 2, 3, 2, 1]), np.array([0, 2, 5, 7, 10, 15, 20])) == 43.0
  assert trapezoid(np.arange(5, dtype=np.int64)).dtype == np.float64
  assert trapezoid(np.arange(5, dtype=np.int32)).dtype == np.float32  # as in JAX, also under x64
  assert trapezoid(np.arange(5, dtype=np.float32)).dtype == np.float32
  y = np.array([1.0, np.inf, 2.0, np.nan])
  np.testing.assert_array_equal(trapezoid(y[:3]), osp_integrate.trapezoid(y[:3]))
  assert np.isnan(trapezoid(y))
  with xjax._src.config.enable_x64(False):
    assert trapezoid(np.arange(5)).dtype == np.float32


def test_trapezoid_jit_vmap_grad(rng, x64):
  y, x = rng.normal(size=(3, 6)), np.sort(rng.uniform(size=6))
  np.testing.assert_allclose(xjax.jit(trapezoid)(y, x), trapezoid(y, x), rtol=1e-15)
  np.testing.assert_allclose(xjax.vmap(trapezoid, in_axes=(0, None))(y, x),
                             [trapezoid(row, x) for row in y], rtol=1e-15)
  check_grads(lambda y, x: trapezoid(y, x, axis=0), (y.T, x), order=1)
  check_grads(lambda y, dx: trapezoid(y, dx=dx), (y, 0.3), order=1)


def test_trapezoid_errors():
  with pytest.raises(ValueError):
    trapezoid(np.ones(5), np.ones(4))
  with pytest.raises(TypeError):
    trapezoid([1.0, 2.0])


# ----------------------------------------------------------------------------
# interpolate.RegularGridInterpolator


def _grid(rng, shape):
  points = tuple(np.sort(rng.uniform(-2, 3, size=n)) for n in shape)
  return points, rng.normal(size=shape)


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("fill_value", [np.nan, None, -7.0])
def test_regular_grid_matches_scipy(method, fill_value, rng, x64):
  points, values = _grid(rng, (5, 4, 3))
  lo, hi = [p[0] for p in points], [p[-1] for p in points]
  xi = rng.uniform(np.array(lo) - 1, np.array(hi) + 1, size=(2, 30, 3))
  xi[0, :3] = [lo, hi, [points[0][2], points[1][1], points[2][1]]]  # grid corners and a node
  expected = osp_interpolate.RegularGridInterpolator(
      points, values, method, bounds_error=False, fill_value=fill_value)(xi)
  interp = RegularGridInterpolator(points, values, method, fill_value=fill_value)
  np.testing.assert_allclose(interp(xi), expected, rtol=1e-12, atol=1e-12)
  # the same points as a tuple of coordinate arrays, and the method given at call time
  other = "nearest" if method == "linear" else "linear"
  expected_other = osp_interpolate.RegularGridInterpolator(
      points, values, other, bounds_error=False, fill_value=fill_value)(xi)
  np.testing.assert_allclose(interp(tuple(np.moveaxis(xi, -1, 0)), method=other), expected_other,
                             rtol=1e-12, atol=1e-12)


def test_regular_grid_trailing_value_axes_1d_and_nan(rng, x64):
  points, values = _grid(rng, (6,))
  values = rng.normal(size=(6, 2, 3))
  xi = np.array([points[0][0] - 1, points[0][2] + 0.1, points[0][-1], np.nan])
  interp = RegularGridInterpolator(points, values)
  out = interp(xi)
  assert out.shape == (4, 2, 3)
  expected = osp_interpolate.RegularGridInterpolator(points, values, bounds_error=False)(xi)
  np.testing.assert_allclose(out, expected, rtol=1e-12)
  assert np.isnan(out[0]).all() and np.isnan(out[3]).all()


def test_regular_grid_dtypes(rng):
  points, values = _grid(rng, (4, 3))
  out = RegularGridInterpolator(points, values.astype(np.float32))(np.zeros((2, 2), np.float32))
  assert out.dtype == np.float32
  int_values = RegularGridInterpolator((np.arange(3), np.arange(4)), np.arange(12).reshape(3, 4))
  assert int_values.values.dtype == np.float32
  np.testing.assert_allclose(int_values(np.array([[1.5, 2.5]])), [8.5])


def test_regular_grid_jit_vmap_pytree(rng):
  points, values = _grid(rng, (5, 4))
  interp = RegularGridInterpolator(points, values.astype(np.float32))
  xi = rng.uniform(-2, 3, size=(7, 2)).astype(np.float32)
  leaves, treedef = xjax.tree_util.tree_flatten(interp)
  assert len(leaves) == 4  # two grids, the values, the fill value
  rebuilt = xjax.tree_util.tree_unflatten(treedef, leaves)
  assert (rebuilt.method, rebuilt.bounds_error) == ("linear", False)
  np.testing.assert_allclose(xjax.jit(lambda f, x: f(x))(interp, xi), interp(xi), rtol=1e-6)
  np.testing.assert_allclose(xjax.vmap(lambda x: interp(x))(xi[:, None, :])[:, 0], interp(xi),
                             rtol=1e-6)
  batched_values = np.stack([values, 2 * values]).astype(np.float32)
  out = xjax.vmap(lambda v: RegularGridInterpolator(points, v)(xi))(batched_values)
  np.testing.assert_allclose(out, np.stack([interp(xi), 2 * interp(xi)]), rtol=1e-5, atol=1e-6)


def test_regular_grid_grads(rng, x64):
  points, values = _grid(rng, (5, 4))
  xi = np.stack([rng.uniform(points[0][0], points[0][-1], 6),
                 rng.uniform(points[1][0], points[1][-1], 6)], axis=-1)
  check_grads(lambda x: RegularGridInterpolator(points, values)(x), (xi,), order=1)
  check_grads(lambda v: RegularGridInterpolator(points, v)(xi), (values,), order=1, modes=("rev",))


def test_regular_grid_errors(rng):
  points, values = _grid(rng, (4, 3))
  with pytest.raises(ValueError, match="method 'cubic' is not defined"):
    RegularGridInterpolator(points, values, method="cubic")
  with pytest.raises(NotImplementedError, match="bounds_error"):
    RegularGridInterpolator(points, values, bounds_error=True)
  with pytest.raises(ValueError, match="there are 3 point arrays, but values has 2 dimensions"):
    RegularGridInterpolator(points + (np.arange(2.0),), values)
  with pytest.raises(ValueError, match="fill_value must be either 'None'"):
    RegularGridInterpolator(points, values.astype(np.float32), fill_value=1j)
  with pytest.raises(TypeError):
    RegularGridInterpolator(points, values.tolist())
  interp = RegularGridInterpolator(points, values)
  with pytest.raises(ValueError, match="have dimension 3, but this RegularGridInterpolator has"
                                       " dimension 2"):
    interp(np.zeros((4, 3)))
  with pytest.raises(ValueError, match="method 'cubic' is not defined"):
    interp(np.zeros((4, 2)), method="cubic")


# ----------------------------------------------------------------------------
# ndimage.map_coordinates

# JAX's mode -> SciPy's mode with the same (documented) behaviour.
SCIPY_MODE = {"constant": "grid-constant", "nearest": "nearest", "wrap": "grid-wrap",
              "mirror": "mirror", "reflect": "reflect"}


@pytest.mark.parametrize("mode", list(SCIPY_MODE))
@pytest.mark.parametrize("order", [0, 1])
def test_map_coordinates_matches_scipy(mode, order, rng, x64):
  image = rng.normal(size=(5, 7))
  coords = [rng.uniform(-9, 14, size=(3, 20)), rng.uniform(-11, 17, size=(3, 20))]
  # grid nodes, the grid's edges and ties between nodes
  coords[0][0, :6], coords[1][0, :6] = [0, 4, -0.25, 4.25, 2.0, 3.0], [0, 6, 3.0, 6.25, -0.25, 1.0]
  if order == 0:  # keep clear of halves, where SciPy rounds half to even and xjax away from 0
    coords = [np.where(np.abs(c % 1 - 0.5) < 1e-3, c + 0.1, c) for c in coords]
  expected = osp_ndimage.map_coordinates(image, coords, order=order, mode=SCIPY_MODE[mode],
                                         cval=1.5)
  np.testing.assert_allclose(map_coordinates(image, coords, order, mode, 1.5), expected,
                             rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", list(SCIPY_MODE))
def test_map_coordinates_3d_and_size_one_axes(mode, rng, x64):
  image = rng.normal(size=(1, 4, 3))
  coords = [rng.uniform(-3, 3, size=12), rng.uniform(-5, 8, size=12), rng.uniform(-4, 6, size=12)]
  expected = osp_ndimage.map_coordinates(image, coords, order=1, mode=SCIPY_MODE[mode], cval=-1.0)
  np.testing.assert_allclose(map_coordinates(image, coords, 1, mode, -1.0), expected,
                             rtol=1e-12, atol=1e-12)


def test_map_coordinates_rounding_dtypes_nan(x64):
  image = np.arange(12.0).reshape(3, 4)
  np.testing.assert_allclose(map_coordinates(image, [np.array([0.5, 1.5]), np.array([1.5, 2.5])], 1),
                             [3.5, 8.5])
  # order 0 rounds halves away from zero (JAX), unlike SciPy's half to even
  np.testing.assert_array_equal(map_coordinates(np.arange(5.0), [np.array([0.5, 1.5, 2.5])], 0),
                                [1.0, 2.0, 3.0])
  ints = np.array([0, 10, -10, 3], np.int32)
  out = map_coordinates(ints, [np.array([0.25, 0.5, 1.5, 2.75])], 1)
  assert out.dtype == np.int32
  np.testing.assert_array_equal(out, [3, 5, 0, 0])  # 2.5 -> 3, 5.0, 0.0, -0.25 -> 0
  out = map_coordinates(image.astype(np.float32), [np.array([0.5]), np.array([1.0])], 1)
  assert out.dtype == np.float32
  assert map_coordinates(image, [np.array(1), np.array(2)], 0).shape == ()
  np.testing.assert_array_equal(map_coordinates(image, [np.array([1, 2]), np.array([3, 0])], 0),
                                [7.0, 8.0])  # integer coordinates
  assert np.isnan(map_coordinates(image, [np.array([np.nan]), np.array([1.0])], 1, "nearest")).all()


def test_map_coordinates_jit_vmap(rng):
  image = rng.normal(size=(4, 6)).astype(np.float32)
  coords = rng.uniform(-2, 7, size=(2, 3, 5)).astype(np.float32)
  f = lambda img, c: map_coordinates(img, [c[0], c[1]], 1, "reflect")
  np.testing.assert_allclose(xjax.jit(f)(image, coords), f(image, coords), rtol=1e-6)
  out = xjax.vmap(f, in_axes=(None, 1))(image, coords)
  np.testing.assert_allclose(out, np.stack([f(image, coords[:, i]) for i in range(3)]), rtol=1e-6)
  images = np.stack([image, -image])
  out = xjax.vmap(f, in_axes=(0, None))(images, coords)
  np.testing.assert_allclose(out, np.stack([f(image, coords), -f(image, coords)]), rtol=1e-6)


def test_map_coordinates_grads(rng, x64):
  image = rng.normal(size=(4, 5))
  # away from integer coordinates, where order 1 has kinks
  coords = np.floor(rng.uniform(-1, 5, size=(2, 6))) + rng.uniform(0.1, 0.9, size=(2, 6))
  for mode in ["constant", "mirror"]:
    check_grads(lambda img, c: map_coordinates(img, [c[0], c[1]], 1, mode, 0.5),
                (image, coords), order=1)
  check_grads(lambda img: map_coordinates(img, [coords[0], coords[1]], 0, "wrap"), (image,),
              order=1, modes=("rev",))


def test_map_coordinates_errors():
  image = np.zeros((3, 4))
  with pytest.raises(ValueError, match=r"coordinates must be a sequence of length input.ndim, "
                                       r"but 1 != 2"):
    map_coordinates(image, [np.zeros(2)], 1)
  with pytest.raises(NotImplementedError, match="does not yet support mode grid-wrap"):
    map_coordinates(image, [np.zeros(2), np.zeros(2)], 1, mode="grid-wrap")
  with pytest.raises(NotImplementedError, match="currently requires order<=1"):
    map_coordinates(image, [np.zeros(2), np.zeros(2)], 3)
