"""Meshes and shardings: how arrays are split over devices (mirrors `jax.sharding`)."""
from xjax._src.array import Shard as Shard
from xjax._src.sharding.axis_types import (AbstractDevice as AbstractDevice,
                                           auto_axes as auto_axes,
                                           explicit_axes as explicit_axes,
                                           use_abstract_mesh as use_abstract_mesh)
from xjax._src.sharding.constraints import reshard as reshard
from xjax._src.sharding.mesh import (AbstractMesh as AbstractMesh, AxisType as AxisType,
                                     Mesh as Mesh, get_abstract_mesh as get_abstract_mesh,
                                     get_concrete_mesh as get_mesh, set_mesh as set_mesh,
                                     use_mesh as use_mesh)
from xjax._src.sharding.partition_spec import PartitionSpec as PartitionSpec
from xjax._src.sharding.shardings import (NamedSharding as NamedSharding, Sharding as Sharding,
                                          SingleDeviceSharding as SingleDeviceSharding)


def make_single_device_sharding(device, *, memory_kind=None) -> SingleDeviceSharding:
  """The sharding placing a whole array on `device` (mirrors
  `jax.sharding.make_single_device_sharding`)."""
  return SingleDeviceSharding(device, memory_kind=memory_kind)
