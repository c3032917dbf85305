"""The bernoulli distribution (mirrors `jax.scipy.stats.bernoulli`)."""
from xjax._src.scipy.stats.bernoulli import cdf as cdf, logpmf as logpmf, pmf as pmf, ppf as ppf
