"""Gaussian kernel density estimation (mirrors `jax.scipy.stats.gaussian_kde`)."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

import xjax.numpy as jnp
from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from xjax._src.random.discrete import choice
from xjax._src.random.keys import split
from xjax._src.random.matrix_samplers import multivariate_normal
from xjax._src.scipy import linalg, special
from xjax._src.tree_util import register_pytree_node_class
from xjax._src.vmap import vmap


@register_pytree_node_class
@dataclass(frozen=True, init=False, slots=True)
class gaussian_kde:
  """A Gaussian kernel density estimate of a (weighted) dataset.

  Args:
    dataset: real data, shape (n,) for one dimension or (d, n) for n points in
      d dimensions; promoted to an inexact dtype.
    bw_method: how the bandwidth factor is chosen: "scott" (the default,
      neff ** (-1 / (d + 4))), "silverman" ((neff (d + 2) / 4) ** (-1 / (d + 4))),
      a scalar factor, or a callable taking the `gaussian_kde` and returning it.
    weights: optional weights of shape (n,); they are normalized to sum to 1.

  Attributes (the pytree children, in this order): `neff` (effective number of
  points, 1 / sum(weights ** 2)), `dataset` (d, n), `weights` (n,), `covariance`
  (d, d; the weighted data covariance times factor ** 2) and `inv_cov` (its
  inverse). Properties `d` and `n` give the dataset's shape.

  Raises:
    TypeError: a non-array `dataset` or `weights`.
    NotImplementedError: complex data.
    ValueError: a dataset with fewer than two elements, weights that are not
      one-dimensional or not of length n, or an unknown `bw_method`.

  Mirrors `jax.scipy.stats.gaussian_kde` (a frozen dataclass registered as a
  pytree, so it can be passed through `jit`, `vmap` and `grad`).
  """
  neff: Any
  dataset: Any
  weights: Any
  covariance: Any
  inv_cov: Any

  def __init__(self, dataset, bw_method=None, weights=None):
    check_arraylike("gaussian_kde", dataset)
    dataset = jnp.atleast_2d(dataset)
    if dtypes.issubdtype(dataset.dtype, np.complexfloating):
      raise NotImplementedError("gaussian_kde does not support complex data")
    if not dataset.size > 1:
      raise ValueError("`dataset` input should have multiple elements.")
    d, n = dataset.shape
    if weights is None:
      dataset, = promote_dtypes_inexact(dataset)
      weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
    else:
      check_arraylike("gaussian_kde", weights)
      dataset, weights = promote_dtypes_inexact(dataset, weights)
      weights = jnp.atleast_1d(weights)
      weights = weights / jnp.sum(weights)
      if weights.ndim != 1:
        raise ValueError("`weights` input should be one-dimensional.")
      if len(weights) != n:
        raise ValueError("`weights` input should be of length n")
    neff = 1 / jnp.sum(weights ** 2)
    self._set(neff=neff, dataset=dataset, weights=weights)

    if bw_method is None or (isinstance(bw_method, str) and bw_method == "scott"):
      factor = jnp.power(neff, -1. / (d + 4))
    elif isinstance(bw_method, str) and bw_method == "silverman":
      factor = jnp.power(neff * (d + 2) / 4.0, -1. / (d + 4))
    elif jnp.isscalar(bw_method) and not isinstance(bw_method, str):
      factor = bw_method
    elif callable(bw_method):
      factor = bw_method(self)
    else:
      raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")

    data_covariance = jnp.atleast_2d(jnp.cov(dataset, rowvar=1, bias=False, aweights=weights))
    self._set(covariance=data_covariance * factor ** 2,
              inv_cov=jnp.linalg.inv(data_covariance) / factor ** 2)

  def _set(self, **fields):
    # The dataclass is frozen; its fields are written once, here and in tree_unflatten.
    for name, value in fields.items():
      object.__setattr__(self, name, value)

  def tree_flatten(self):
    return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

  @classmethod
  def tree_unflatten(cls, aux_data, children):
    del aux_data
    kde = cls.__new__(cls)
    kde._set(**dict(zip(("neff", "dataset", "weights", "covariance", "inv_cov"), children,
                        strict=True)))
    return kde

  @property
  def d(self):
    """The number of dimensions of the data."""
    return self.dataset.shape[0]

  @property
  def n(self):
    """The number of data points."""
    return self.dataset.shape[1]

  def evaluate(self, points):
    """The estimated density at `points`, shape (d, m) (or (m,) when d = 1, or (d,) for one point).

    Returns an array of shape (m,). Raises ValueError when the points'
    dimension differs from the dataset's, NotImplementedError for complex points.
    """
    check_arraylike("evaluate", points)
    points = self._reshape_points(points)
    return _kernel_sum(False, self.dataset, self.weights, points, self.inv_cov)

  def __call__(self, points):
    """The same as `evaluate`."""
    return self.evaluate(points)

  def pdf(self, x):
    """The same as `evaluate`."""
    return self.evaluate(x)

  def logpdf(self, x):
    """The log of the estimated density at `x` (shapes as in `evaluate`), by a logsumexp."""
    check_arraylike("logpdf", x)
    x = self._reshape_points(x)
    return _kernel_sum(True, self.dataset, self.weights, x, self.inv_cov)

  def integrate_gaussian(self, mean, cov):
    """The integral of the density times the Gaussian N(mean, cov); mean (d,), cov (d, d).

    Raises ValueError when mean or cov do not have the dataset's dimension.
    """
    mean = jnp.atleast_1d(jnp.squeeze(mean))
    cov = jnp.atleast_2d(cov)
    if mean.shape != (self.d,):
      raise ValueError(f"mean does not have dimension {self.d}")
    if cov.shape != (self.d, self.d):
      raise ValueError(f"covariance does not have dimension {self.d}")
    chol, norm = _sum_factor(self.covariance + cov, self.d)
    return _convolved_sum(chol, norm, self.dataset, self.weights, mean)

  @jit
  def integrate_box_1d(self, low, high):
    """The probability mass between the scalars `low` and `high` (1-D data only).

    Raises ValueError for d != 1 or non-scalar limits. Jitted, as in JAX.
    """
    if self.d != 1:
      raise ValueError("integrate_box_1d() only handles 1D pdfs")
    if np.ndim(low) != 0 or np.ndim(high) != 0:
      raise ValueError("the limits of integration in integrate_box_1d must be scalars")
    sigma = jnp.squeeze(jnp.sqrt(self.covariance))
    low = jnp.squeeze((low - self.dataset) / sigma)
    high = jnp.squeeze((high - self.dataset) / sigma)
    return jnp.sum(self.weights * (special.ndtr(high) - special.ndtr(low)))

  def integrate_kde(self, other):
    """The integral of the product of this density and `other` (a gaussian_kde of equal d).

    Raises ValueError when the dimensions differ.
    """
    if other.d != self.d:
      raise ValueError("KDEs are not the same dimensionality")
    chol, norm = _sum_factor(self.covariance + other.covariance, self.d)
    small, large = (self, other) if self.n < other.n else (other, self)
    convolve = functools.partial(_convolved_sum, chol, norm, large.dataset, large.weights)
    return jnp.sum(vmap(convolve, in_axes=1)(small.dataset) * small.weights)

  @functools.partial(jit, static_argnames=("shape",))
  def resample(self, key, shape=()):
    """Samples drawn from the estimated density (the same draws as JAX for the same key).

    A data index is drawn with `random.choice` by the weights (first half of
    `key`), then Gaussian noise with `covariance` is added
    (`random.multivariate_normal`, second half).

    Args:
      key: a PRNG key.
      shape: the batch shape of the samples, a tuple of non-negative ints.

    Returns:
      An array of shape (d,) + shape for shapes of at most one dimension. As in
      JAX, the noise is transposed as a whole, so for longer shapes the result
      is the data part (d,) + shape plus the noise of shape reversed(shape) + (d,).
    """
    index_key, noise_key = split(key)
    index = choice(index_key, self.n, shape=shape, p=self.weights)
    noise = multivariate_normal(noise_key, jnp.zeros(self.d, self.covariance.dtype),
                                self.covariance, shape=shape, dtype=self.dataset.dtype)
    return self.dataset[:, index] + noise.T

  def integrate_box(self, low_bounds, high_bounds, maxpts=None):
    """Not implemented (as in JAX): raises NotImplementedError; use `integrate_box_1d`."""
    del low_bounds, high_bounds, maxpts
    raise NotImplementedError("only 1D box integrations are supported; use `integrate_box_1d`")

  def set_bandwidth(self, bw_method=None):
    """Not implemented (as in JAX; the object is immutable): raises NotImplementedError."""
    del bw_method
    raise NotImplementedError("dynamically changing the bandwidth method is not supported")

  def _reshape_points(self, points):
    """`points` as (d, m); a (d,) vector is one point. Errors as in JAX."""
    points = jnp.asarray(points)
    if dtypes.issubdtype(points.dtype, np.complexfloating):
      raise NotImplementedError("gaussian_kde does not support complex coordinates")
    points = jnp.atleast_2d(points)
    d, m = points.shape
    if d != self.d:
      if d == 1 and m == self.d:
        return jnp.reshape(points, (self.d, 1))
      raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
    return points


def _sum_factor(cov, d):
  """The Cholesky factor of `cov` (for cho_solve) and 1 / sqrt((2 pi)^d det(cov))."""
  chol = linalg.cho_factor(cov)
  norm = 1.0 / (jnp.sqrt(2 * np.pi) ** d * jnp.prod(jnp.diag(chol[0])))
  return chol, norm


def _convolved_sum(chol, norm, dataset, weights, mean):
  """norm * sum_i weights_i exp(-(x_i - mean)^T cov^-1 (x_i - mean) / 2), cov given by `chol`."""
  diff = dataset - mean[:, None]
  mahalanobis = jnp.sum(diff * linalg.cho_solve(chol, diff), axis=0)
  return norm * jnp.sum(jnp.exp(-0.5 * mahalanobis) * weights)


@functools.partial(jit, static_argnums=0)
def _kernel_sum(in_log, dataset, weights, points, precision):
  """sum_i weights_i N(points_j; dataset_i, precision^-1) for each point j (or its log).

  dataset (d, n), weights (n,), points (d, m), precision (d, d); returns (m,).
  Both sets are whitened by the lower Cholesky factor L of the precision, so
  the exponent is -|L^T (x - x_i)|^2 / 2 and log det(precision)^(1/2) = sum log diag L.
  """
  dataset, weights, points, precision = promote_dtypes_inexact(dataset, weights, points,
                                                               precision)
  d = dataset.shape[0]
  whitening = linalg.cholesky(precision, lower=True)
  white_data = jnp.dot(dataset.T, whitening)      # (n, d)
  white_points = jnp.dot(points.T, whitening)     # (m, d)
  log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * d * jnp.log(2 * np.pi)
  sq_dist = jnp.sum(jnp.square(white_data[None, :, :] - white_points[:, None, :]), axis=-1)
  log_kernel = log_norm - 0.5 * sq_dist           # (m, n)
  if in_log:
    return special.logsumexp(jnp.log(weights) + log_kernel, axis=1)
  return jnp.sum(weights * jnp.exp(log_kernel), axis=1)
