"""Small pieces shared by the continuous distributions of `xjax.scipy.stats`."""
from __future__ import annotations

import functools

import numpy as np

import xjax.numpy as jnp
from xjax._src.numpy import util


def promote_args_inexact(fun_name: str, *args):
  """`xjax._src.numpy.util.promote_args_inexact`, with host constants made xjax arrays.

  The promotion leaves NumPy and Python values on the host; turning them into
  arrays (weak types kept) makes the formulas run in XLA as in JAX, not in
  NumPy, which would warn at 0/0 and log(0).
  """
  return [jnp.asarray(a) for a in util.promote_args_inexact(fun_name, *args)]


def promote_dtypes_inexact(*args):
  """`xjax._src.numpy.util.promote_dtypes_inexact`, with host constants made xjax arrays."""
  return [jnp.asarray(a) for a in util.promote_dtypes_inexact(*args)]


def standardize(x, loc, scale):
  """(x - loc) / scale: the point in the distribution's standard coordinates."""
  return (x - loc) / scale


def nan_if_any_nan(value, *args):
  """`value`, but NaN wherever one of `args` is NaN (SciPy propagates NaN arguments
  that a support check like `x < loc` would otherwise turn into 0 or -inf)."""
  return jnp.where(functools.reduce(jnp.logical_or, [jnp.isnan(a) for a in args]), np.nan, value)


def log_of_probability(p, q):
  """log p for a probability p with complement q = 1 - p (both computed, each accurate
  when small): log p where p < 1/2, log1p(-q) above, where log p would lose q to rounding."""
  return jnp.where(p < 0.5, jnp.log(p), jnp.log1p(-q))


def nan_unless_probability(q, value):
  """`value` where q lies in [0, 1], NaN where q is NaN or outside [0, 1] (for ppf functions)."""
  return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, value)
