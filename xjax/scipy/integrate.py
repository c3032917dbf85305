"""Integration of sampled data on xjax arrays (mirrors `jax.scipy.integrate`)."""
from xjax._src.scipy.integrate import trapezoid as trapezoid
