"""The multivariate normal distribution (mirrors `jax.scipy.stats.multivariate_normal`)."""
from xjax._src.scipy.stats.multivariate_normal import (
    logpdf as logpdf, pdf as pdf,
)
