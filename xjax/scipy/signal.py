"""SciPy's signal processing on xjax arrays (mirrors `jax.scipy.signal`)."""
from xjax._src.scipy.signal import (
    convolve as convolve, convolve2d as convolve2d, correlate as correlate,
    correlate2d as correlate2d, csd as csd, detrend as detrend, fftconvolve as fftconvolve,
    istft as istft, stft as stft, welch as welch,
)
