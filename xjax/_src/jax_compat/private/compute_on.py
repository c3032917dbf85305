"""`jax._src.compute_on` under `xjax.install_as_jax()`: JAX's placement of computations on other
compute units (host, TPU SparseCore). xjax does not implement it: using it raises."""


def compute_on2(f, *, compute_type, out_memory_spaces=None):
  """Mirrors `jax._src.compute_on.compute_on2`; not implemented (raises NotImplementedError)."""
  raise NotImplementedError(f"xjax does not implement compute_on (compute_type={compute_type!r})")


def compute_on(compute_type):
  """Mirrors `jax.experimental.compute_on.compute_on`; not implemented (raises
  NotImplementedError)."""
  raise NotImplementedError(f"xjax does not implement compute_on (compute_type={compute_type!r})")
