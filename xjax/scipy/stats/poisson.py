"""The poisson distribution (mirrors `jax.scipy.stats.poisson`)."""
from xjax._src.scipy.stats.poisson import cdf as cdf, entropy as entropy, logpmf as logpmf, pmf as pmf
