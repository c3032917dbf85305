"""The nbinom distribution (mirrors `jax.scipy.stats.nbinom`)."""
from xjax._src.scipy.stats.nbinom import logpmf as logpmf, pmf as pmf
