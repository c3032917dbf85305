"""xjax's version (the package's `__version__`)."""
__version__ = "0.1.0"
__version_info__ = tuple(int(p) for p in __version__.split("."))

# The JAX release whose API xjax mirrors: `jax.__version__` under `install_as_jax`.
JAX_VERSION = "0.10.2"
