"""`jax._src.shard_map` under `xjax.install_as_jax()`: xjax's `xjax._src.shard_map` (read through
the alias fallback), and JAX's internal `top_level_all_gather`, which xjax does not have."""


def top_level_all_gather(xs, out_sharding, *, multi_dim=False):
  """JAX's internal all-gather of Explicit-mesh arrays outside shard_map; not in xjax."""
  raise NotImplementedError("xjax does not implement top_level_all_gather (use reshard)")
