"""Array API inspection and the Array API cumulative functions, as JAX 0.10.2 has them
(issue 13)."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.config import enable_x64


def test_array_namespace():
  x = jnp.ones(2)
  assert x.__array_namespace__() is jnp
  assert x.__array_namespace__(api_version="2024.12") is jnp
  with pytest.raises(ValueError, match="api_version='2010.12' is not available"):
    x.__array_namespace__(api_version="2010.12")
  assert jnp.__array_api_version__ == "2024.12"


def test_namespace_info_matches_jax():
  info = jnp.__array_namespace_info__()
  assert info.capabilities() == {"boolean indexing": False, "data-dependent shapes": False,
                                 "max dimensions": 64}
  assert info.default_device() is None
  assert info.devices() == [None, *xjax.devices()]
  assert info.default_dtypes() == {"real floating": np.dtype("float32"),
                                   "complex floating": np.dtype("complex64"),
                                   "integral": np.dtype("int32"), "indexing": np.dtype("int32")}
  assert set(info.dtypes()) == {"bool", "int8", "int16", "int32", "uint8", "uint16", "uint32",
                                "float32", "complex64"}
  assert set(info.dtypes(kind=("bool", "real floating"))) == {"bool", "float32"}
  with enable_x64(True):
    assert info.default_dtypes()["integral"] == np.int64
    assert "float64" in info.dtypes(kind="real floating")
  with pytest.raises(KeyError):
    info.dtypes(kind="bogus")


@pytest.mark.parametrize("fn, np_fn, identity", [(jnp.cumulative_sum, np.cumsum, 0),
                                                 (jnp.cumulative_prod, np.cumprod, 1)])
@pytest.mark.parametrize("shape, axis", [((4,), None), ((2, 3), 1), ((2, 3), -2), ((2, 0), 1)])
@pytest.mark.parametrize("include_initial", [False, True])
def test_cumulative_functions_match_numpy(rng, fn, np_fn, identity, shape, axis,
                                          include_initial):
  x = rng.integers(-3, 4, shape).astype(np.float32)
  want = np_fn(x, axis=0 if axis is None else axis)
  if include_initial:
    ax = 0 if axis is None else axis
    widths = [(0, 0)] * x.ndim
    widths[ax] = (1, 0)
    want = np.pad(want, widths, constant_values=identity)
  np.testing.assert_allclose(fn(x, axis=axis, include_initial=include_initial), want)


def test_cumulative_dtypes_and_errors_as_jax():
  assert jnp.cumulative_sum(np.array([1, 2], np.uint8)).dtype == np.uint32  # widened, as sum
  assert jnp.cumulative_prod(np.array([1, 2], np.uint8)).dtype == np.uint8  # not, as in JAX
  assert jnp.cumulative_sum(np.array([True, True])).dtype == np.int32
  assert jnp.cumulative_sum(np.array([1, 2]), dtype=jnp.float32).dtype == np.float32
  with pytest.raises(ValueError, match="axis was not set to an explicit value"):
    jnp.cumulative_sum(np.ones((2, 2)))
  with pytest.raises(ValueError, match="non-scalar to take a cumulative product"):
    jnp.cumulative_prod(np.array(5))
  np.testing.assert_array_equal(
      xjax.vmap(lambda r: jnp.cumulative_sum(r, include_initial=True))(np.ones((2, 3))),
      [[0, 1, 2, 3]] * 2)
