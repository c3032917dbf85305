"""The XLA backend (mirrors part of `jax.extend.backend`)."""
from xjax._src import backend as _backend


def get_backend(platform: str | None = None):
  """The PJRT client of `platform` (None: the default one), made on first use.

  Raises:
    RuntimeError: `platform` is not the platform xjax runs on (JAX's "Unknown
      backend" error).
  """
  client = _backend.client()
  if platform is not None and platform not in (client.platform, _platform_alias(client)):
    raise RuntimeError(f"Unknown backend {platform}. Available: ['{client.platform}']")
  return client


def backends() -> dict:
  """The initialized backends by platform name (xjax runs one)."""
  client = _backend.client()
  return {client.platform: client}


def _platform_alias(client) -> str:
  return "gpu" if client.platform in ("cuda", "rocm") else client.platform
