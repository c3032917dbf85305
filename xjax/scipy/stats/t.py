"""The Student's t distribution (mirrors `jax.scipy.stats.t`)."""
from xjax._src.scipy.stats.t import (
    logpdf as logpdf, pdf as pdf,
)
