"""`jax._src.test_util` under `xjax.install_as_jax()`: xjax's stand-in for JAX's internal test
helpers (`xjax._src.jaxtest`, every name it has), so that JAX's own test files run on xjax."""
from xjax._src import jaxtest as _jaxtest

globals().update({k: v for k, v in vars(_jaxtest).items() if not k.startswith("__")})
