"""`jax._src.sharding_impls` under `xjax.install_as_jax()`: the concrete shardings, the
"unspecified" marker of jit's in/out shardings, and the mesh helpers JAX keeps here."""
from xjax._src.sharding.mesh import make_mesh as make_mesh, set_mesh as set_mesh
from xjax._src.sharding.shardings import (  # noqa: F401
    GSPMDSharding, NamedSharding, SingleDeviceSharding)


class UnspecifiedValue:
  """jit's marker for an in/out sharding left to the compiler."""

  def __repr__(self):
    return "UnspecifiedValue"


UNSPECIFIED = UnspecifiedValue()


def make_single_device_sharding(device, memory_kind=None):
  """The sharding placing a whole array on `device`. (jaxlib's array code also calls this
  function by its JAX module name when it makes an array on one device.)"""
  return SingleDeviceSharding(device, memory_kind=memory_kind)


def parse_flatten_op_sharding(hlo_sharding, mesh):
  """JAX's conversion of an XLA sharding back to PartitionSpecs: xjax does not provide it
  (its shardings are never rebuilt from XLA's)."""
  raise NotImplementedError("xjax does not parse XLA shardings back into PartitionSpecs")
