"""Private JAX modules JAX's lax tests import, as xjax provides them: `jax._src.lax.lax`
(xjax/_src/jax_compat/private/lax/lax.py), `jax._src.literals`, the canonicalize-value handler
registry of `jax._src.dtypes`, and the `jax.export` placeholder (issue 37)."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src import dtypes
from xjax._src import core

from xjax._src.jax_compat.private import literals
from xjax._src.jax_compat.private.lax import lax as lax_internal


@pytest.mark.parametrize("weak_type", [False, True])
def test_convert_element_type_gives_arrays_of_the_asked_weak_type(weak_type):
  x = lax_internal._convert_element_type(np.arange(3), np.dtype(np.float32), weak_type=weak_type)
  assert isinstance(x, xjax.Array) and x.dtype == np.float32
  assert dtypes.is_weakly_typed(x) == weak_type
  np.testing.assert_array_equal(x, [0., 1., 2.])
  y = lax_internal._convert_element_type(np.ones((2,), np.int32), weak_type=weak_type)
  assert y.dtype == np.int32 and dtypes.is_weakly_typed(y) == weak_type
  with pytest.warns(np.exceptions.ComplexWarning):
    lax_internal._convert_element_type(np.ones(2, np.complex64), np.dtype(np.float32))


def test_convert_element_type_under_jit_traces():
  f = xjax.jit(lambda x: lax_internal._convert_element_type(x, np.dtype(np.int32), True))
  out = f(np.array([1.5, 2.5], np.float32))
  assert out.dtype == np.int32 and out.weak_type
  np.testing.assert_array_equal(out, [1, 2])


def test_asarray_binds_nothing():
  for x in (1.0, np.float32(1), np.array([1, 2]), True):
    out = lax_internal.asarray(x)
    assert isinstance(out, xjax.Array)
    assert not xjax.make_jaxpr(lax_internal.asarray)(x).eqns
  assert lax_internal.asarray(1.0).weak_type and not lax_internal.asarray(np.float32(1)).weak_type
  with pytest.raises(TypeError, match="expected ArrayLike"):
    lax_internal.asarray("a")


def test_delta_and_fallback_names():
  d = lax_internal._delta(np.float32, (3, 2, 3), (0, 2))
  np.testing.assert_array_equal(d, np.broadcast_to(np.eye(3)[:, None, :], (3, 2, 3)))
  assert lax_internal.add is xjax.lax.add
  assert lax_internal._const(np.float32(2), 0).dtype == np.float32
  with pytest.raises(AttributeError):
    lax_internal.no_such_name


def test_typed_ndarray_keeps_its_weak_type_when_staged():
  aval = core.ShapedArray((), np.float32, weak_type=True)
  x = literals.TypedNdArray(np.array(1.0, np.float32), aval=aval)
  assert x.aval is aval and x.weak_type and isinstance(x.val, np.ndarray)
  assert dtypes.is_weakly_typed(lax_internal.stage(x))
  assert not literals.TypedNdArray(np.ones(2)).weak_type


def test_canonicalize_value_handlers():
  class Box:
    def __init__(self, v):
      self.v = v
  try:
    dtypes.register_canonicalize_value_handler(Box, lambda b: np.asarray(b.v, np.int32))
    out = core.canonicalize_value(Box(3))
    assert out.dtype == np.int32 and out == 3
    dtypes.register_canonicalize_value_handler(Box, None)
    b = Box(1)
    assert core.canonicalize_value(b) is b
  finally:
    dtypes.canonicalize_value_handlers.pop(Box, None)
  assert core.canonicalize_value(1.0).dtype == np.float32


def test_export_is_an_honest_placeholder():
  from xjax import export
  with pytest.raises(NotImplementedError, match="issue 37"):
    export.export(jnp.sin)
  with pytest.raises(NotImplementedError, match="issue 37"):
    export.symbolic_shape("a")
  with pytest.raises(NotImplementedError, match="issue 37"):
    export.Exported()
  assert export.is_symbolic_dim(3) is False
  assert xjax.export is export
