"""The von Mises distribution (mirrors `jax.scipy.stats.vonmises`)."""
from xjax._src.scipy.stats.vonmises import (
    logpdf as logpdf, pdf as pdf,
)
