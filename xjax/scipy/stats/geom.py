"""The geom distribution (mirrors `jax.scipy.stats.geom`)."""
from xjax._src.scipy.stats.geom import logpmf as logpmf, pmf as pmf
