"""The betabinom distribution (mirrors `jax.scipy.stats.betabinom`)."""
from xjax._src.scipy.stats.betabinom import logpmf as logpmf, pmf as pmf
