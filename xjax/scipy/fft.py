"""Discrete cosine transforms (mirrors `jax.scipy.fft`)."""
from xjax._src.scipy.fft import dct as dct, dctn as dctn, idct as idct, idctn as idctn
