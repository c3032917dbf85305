"""The Dirichlet distribution (mirrors `jax.scipy.stats.dirichlet`)."""
from xjax._src.scipy.stats.dirichlet import (
    logpdf as logpdf, pdf as pdf,
)
