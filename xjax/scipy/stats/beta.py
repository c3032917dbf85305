"""The beta distribution (mirrors `jax.scipy.stats.beta`)."""
from xjax._src.scipy.stats.beta import (
    cdf as cdf, logcdf as logcdf, logpdf as logpdf, logsf as logsf, pdf as pdf, sf as sf,
)
