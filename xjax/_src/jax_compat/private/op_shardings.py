"""`jax._src.op_shardings` under `xjax.install_as_jax()`: comparisons of XLA shardings (the
HloSharding objects that `Sharding._to_xla_hlo_sharding` returns)."""


def is_hlo_sharding_replicated(hlo_sharding) -> bool:
  """Whether the sharding keeps a whole copy on every device (one device counts as replicated)."""
  if hlo_sharding.num_devices() == 1:
    return True
  return hlo_sharding.is_replicated()


def are_hlo_shardings_equal(a, b) -> bool:
  """Whether two XLA shardings place data the same way (all replicated ones are equal)."""
  if a is b:
    return True
  if is_hlo_sharding_replicated(a) and is_hlo_sharding_replicated(b):
    return True
  return a == b
