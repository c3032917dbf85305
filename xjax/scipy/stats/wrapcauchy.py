"""The wrapped Cauchy distribution (mirrors `jax.scipy.stats.wrapcauchy`)."""
from xjax._src.scipy.stats.wrapcauchy import (
    logpdf as logpdf, pdf as pdf,
)
