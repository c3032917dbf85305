"""The chi-square distribution (mirrors `jax.scipy.stats.chi2`)."""
from xjax._src.scipy.stats.chi2 import (
    cdf as cdf, logcdf as logcdf, logpdf as logpdf, logsf as logsf, pdf as pdf, sf as sf,
)
