"""Interpolation on xjax arrays (mirrors `jax.scipy.interpolate`)."""
from xjax._src.scipy.interpolate import RegularGridInterpolator as RegularGridInterpolator
