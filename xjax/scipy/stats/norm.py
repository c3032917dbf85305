"""The normal distribution (mirrors `jax.scipy.stats.norm`)."""
from xjax._src.scipy.stats.norm import (
    cdf as cdf, isf as isf, logcdf as logcdf, logpdf as logpdf, logsf as logsf, pdf as pdf,
    ppf as ppf, sf as sf,
)
