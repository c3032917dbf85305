"""The left-skewed Gumbel distribution (mirrors `jax.scipy.stats.gumbel_l`)."""
from xjax._src.scipy.stats.gumbel_l import (
    cdf as cdf, logcdf as logcdf, logpdf as logpdf, logsf as logsf, pdf as pdf, ppf as ppf,
    sf as sf,
)
