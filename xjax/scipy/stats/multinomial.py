"""The multinomial distribution (mirrors `jax.scipy.stats.multinomial`)."""
from xjax._src.scipy.stats.multinomial import logpmf as logpmf, pmf as pmf
