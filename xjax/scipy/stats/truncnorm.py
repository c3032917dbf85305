"""The truncated normal distribution (mirrors `jax.scipy.stats.truncnorm`)."""
from xjax._src.scipy.stats.truncnorm import (
    cdf as cdf, logcdf as logcdf, logpdf as logpdf, logsf as logsf, pdf as pdf, sf as sf,
)
