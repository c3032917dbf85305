"""`jax.experimental.custom_partitioning` — not implemented by xjax.

JAX's `custom_partitioning` lets a function choose its own SPMD partitioning through Python
callbacks that XLA's partitioner calls during compilation. xjax does not register such
callbacks with XLA, so the decorator exists only to say so: applying it raises
NotImplementedError (rather than a ModuleNotFoundError at import).
"""


class custom_partitioning:
  """Mirrors `jax.experimental.custom_partitioning.custom_partitioning`; not implemented.

  Raises:
    NotImplementedError: always, when applied to a function.
  """

  def __init__(self, fun, static_argnums=()):
    raise NotImplementedError(
        "xjax does not implement jax.experimental.custom_partitioning (XLA partitioner "
        "callbacks); partition the function with shard_map or sharding constraints instead")
