"""The gamma distribution (mirrors `jax.scipy.stats.gamma`)."""
from xjax._src.scipy.stats.gamma import (
    cdf as cdf, logcdf as logcdf, logpdf as logpdf, logsf as logsf, pdf as pdf, sf as sf,
)
