"""Sharding: meshes of devices, partition specs, and shardings of arrays over them.

`mesh` (Mesh, AbstractMesh, AxisType, the context mesh), `partition_spec`
(PartitionSpec) and `shardings` (Sharding, SingleDeviceSharding,
NamedSharding, and the conversion to XLA's HloSharding and Shardy's text)
are pure semantics; `spmd` compiles and runs programs over several devices.
"""
