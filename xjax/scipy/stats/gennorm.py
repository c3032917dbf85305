"""The generalized normal distribution (mirrors `jax.scipy.stats.gennorm`)."""
from xjax._src.scipy.stats.gennorm import (
    cdf as cdf, logpdf as logpdf, pdf as pdf,
)
