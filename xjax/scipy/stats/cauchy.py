"""The Cauchy distribution (mirrors `jax.scipy.stats.cauchy`)."""
from xjax._src.scipy.stats.cauchy import (
    cdf as cdf, isf as isf, logcdf as logcdf, logpdf as logpdf, logsf as logsf, pdf as pdf,
    ppf as ppf, sf as sf,
)
