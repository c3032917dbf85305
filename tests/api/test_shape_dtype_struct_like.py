"""`ShapeDtypeStruct.like` and the mesh argument checks JAX's array_test states."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax.sharding import AbstractMesh, AxisType, SingleDeviceSharding


def test_like_reads_shape_dtype_weak_type_and_committed_sharding():
  weak = xjax.ShapeDtypeStruct.like(jnp.array(1.0))
  assert (weak.shape, weak.dtype, weak.weak_type, weak.sharding) == ((), np.float32, True, None)
  strong = xjax.ShapeDtypeStruct.like(np.ones((2, 3), np.int32))
  assert (strong.shape, strong.dtype, strong.weak_type) == ((2, 3), np.int32, False)
  assert xjax.ShapeDtypeStruct.like(jnp.arange(8)).sharding is None  # uncommitted
  s = SingleDeviceSharding(xjax.devices()[0])
  assert xjax.ShapeDtypeStruct.like(xjax.device_put(jnp.arange(8), s)).sharding == s
  # It stands in for the array in an AOT trace.
  traced = xjax.jit(lambda x: x * 2).trace(xjax.ShapeDtypeStruct.like(jnp.ones(4)))
  assert traced.out_info.shape == (4,)


def test_axis_types_are_one_per_axis_name():
  with pytest.raises(ValueError, match="Number of axis names should match the number of "
                                       "axis_types"):
    AbstractMesh((2, 1), ("x", "y"), axis_types=AxisType.Auto)
  for bad in (("explicit",), "explicit", ("explicit", AxisType.Explicit)):
    with pytest.raises(TypeError, match="axis_types.*must be of type"):
      AbstractMesh((2,) * (len(bad) if isinstance(bad, tuple) else 1),
                   ("x", "y")[:len(bad) if isinstance(bad, tuple) else 1], axis_types=bad)
  assert AbstractMesh((2,), "x", axis_types=AxisType.Auto).axis_types == (AxisType.Auto,)
  with pytest.raises(ValueError, match="Mesh axis names cannot be None"):
    xjax.sharding.Mesh(np.array(xjax.devices()[:1]).reshape(1, 1), (None, "x"))
