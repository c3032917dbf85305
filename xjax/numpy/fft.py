"""Discrete Fourier transforms (mirrors `jax.numpy.fft`)."""
from xjax._src.numpy.fft import (
    fft as fft, fft2 as fft2, fftfreq as fftfreq, fftn as fftn, fftshift as fftshift,
    hfft as hfft, ifft as ifft, ifft2 as ifft2, ifftn as ifftn, ifftshift as ifftshift,
    ihfft as ihfft, irfft as irfft, irfft2 as irfft2, irfftn as irfftn, rfft as rfft,
    rfft2 as rfft2, rfftfreq as rfftfreq, rfftn as rfftn,
)
