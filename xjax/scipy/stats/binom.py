"""The binom distribution (mirrors `jax.scipy.stats.binom`)."""
from xjax._src.scipy.stats.binom import logpmf as logpmf, pmf as pmf
