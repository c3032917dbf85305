"""The Pareto distribution (mirrors `jax.scipy.stats.pareto`)."""
from xjax._src.scipy.stats.pareto import (
    cdf as cdf, logcdf as logcdf, logpdf as logpdf, logsf as logsf, pdf as pdf, ppf as ppf,
    sf as sf,
)
