"""Multidimensional image processing on xjax arrays (mirrors `jax.scipy.ndimage`)."""
from xjax._src.scipy.ndimage import map_coordinates as map_coordinates
