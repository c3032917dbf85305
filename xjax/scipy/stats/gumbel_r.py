"""The right-skewed Gumbel distribution (mirrors `jax.scipy.stats.gumbel_r`)."""
from xjax._src.scipy.stats.gumbel_r import (
    cdf as cdf, logcdf as logcdf, logpdf as logpdf, logsf as logsf, pdf as pdf, ppf as ppf,
    sf as sf,
)
