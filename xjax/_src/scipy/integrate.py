"""Numerical integration of sampled data (mirrors `jax.scipy.integrate`)."""
from __future__ import annotations

from xjax._src.jit import jit
from xjax._src.numpy import reductions


@jit(static_argnames=("axis",))
def trapezoid(y, x=None, dx=1.0, axis: int = -1):
  """The integral of `y` along `axis` by the composite trapezoidal rule.

  Args:
    y: the sampled values, an array of any shape (promoted to an inexact dtype).
    x: the sample points: a 1-D array of `y`'s length along `axis`, or an array
      of `y`'s shape; None (default) for samples `dx` apart.
    dx: the spacing between samples when `x` is None (default 1.0).
    axis: the axis of `y` to integrate along (default -1); static.

  Returns:
    An inexact array of `y`'s shape without `axis`: the sum over consecutive
    samples of (x[i+1] - x[i]) * (y[i] + y[i+1]) / 2.

  Raises:
    ValueError: `x` does not match `y` along `axis`.
    TypeError: `y`, `x` or `dx` is not array-like.

  Mirrors `jax.scipy.integrate.trapezoid` (which is `jax.numpy.trapezoid` under jit).
  """
  return reductions.trapezoid(y, x, dx, axis)
