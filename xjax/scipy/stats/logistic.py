"""The logistic distribution (mirrors `jax.scipy.stats.logistic`)."""
from xjax._src.scipy.stats.logistic import (
    cdf as cdf, isf as isf, logpdf as logpdf, pdf as pdf, ppf as ppf, sf as sf,
)
