"""Unconstrained minimization on xjax arrays (mirrors `jax.scipy.optimize`).

`minimize` runs BFGS (Nocedal and Wright, Algorithm 6.1) or JAX's
experimental L-BFGS (Algorithm 7.5, with Sorber et al.'s extension to
complex variables) as one `while_loop`, taking gradients of the objective
with `value_and_grad` and steps from the strong-Wolfe `line_search`. The
whole solve therefore traces once under `jit` and batches under `vmap`.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, NamedTuple

import numpy as np

import xjax.numpy as jnp
from xjax._src import dtypes
from xjax._src.api import value_and_grad
from xjax._src.lax.control_flow.loops import fori_loop, while_loop
from xjax._src.lax.dot import Precision
from xjax._src.scipy.line_search import line_search

_dot = partial(jnp.dot, precision=Precision.HIGHEST)
_einsum = partial(jnp.einsum, precision=Precision.HIGHEST)


class OptimizeResults(NamedTuple):
  """The result of `minimize`.

  Fields:
    x: the final point.
    success: whether the gradient norm fell below the tolerance without a
      line-search failure.
    status: 0 converged, 1 maxiter reached, 3 zoom failed, 4 saddle point,
      5 line-search maxiter reached, -1 undefined (BFGS); L-BFGS uses its own
      codes (0 converged, 1 maxiter, 2 maxfun, 3 maxgrad, 4 ftol, 5 line search failed).
    fun: the objective at `x`.
    jac: its gradient at `x`.
    hess_inv: the final inverse-Hessian estimate (None for L-BFGS).
    nfev, njev: the number of objective and gradient evaluations.
    nit: the number of iterations.

  Mirrors `jax.scipy.optimize.OptimizeResults`.
  """
  x: Any
  success: Any
  status: Any
  fun: Any
  jac: Any
  hess_inv: Any
  nfev: Any
  njev: Any
  nit: Any


def _check_x0(x0):
  x0 = jnp.asarray(x0)
  if x0.ndim == 0:
    raise IndexError("minimize: x0 must be a 1-D array of shape (n,), got a scalar "
                     f"{x0.aval.str_short()}.")
  if x0.ndim != 1:
    raise TypeError("minimize: x0 must be a 1-D array of shape (n,), got "
                    f"{x0.aval.str_short()}; flatten it (and reshape inside fun).")
  return x0


# ----------------------------------------------------------------------------
# BFGS


class _BFGSState(NamedTuple):
  converged: Any
  failed: Any
  k: Any
  nfev: Any
  ngev: Any
  nhev: Any
  x_k: Any
  f_k: Any
  g_k: Any
  H_k: Any
  old_old_fval: Any
  status: Any
  line_search_status: Any


def _minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
  """BFGS from `x0`; options as `jax._src.scipy.optimize.bfgs.minimize_bfgs`."""
  if maxiter is None:
    maxiter = np.size(x0) * 200
  n = x0.shape[0]
  f_0, g_0 = value_and_grad(fun)(x0)
  init = _BFGSState(
      converged=jnp.linalg.norm(g_0, ord=norm) < gtol, failed=False, k=0, nfev=1, ngev=1,
      nhev=0, x_k=x0, f_k=f_0, g_k=g_0, H_k=jnp.eye(n, dtype=x0.dtype),
      old_old_fval=f_0 + jnp.linalg.norm(g_0) / 2, status=0, line_search_status=0)

  def body(s):
    p_k = -_dot(s.H_k, s.g_k)
    ls = line_search(fun, s.x_k, p_k, old_fval=s.f_k, old_old_fval=s.old_old_fval, gfk=s.g_k,
                     maxiter=line_search_maxiter)
    step = ls.a_k * p_k
    dgrad = ls.g_k - s.g_k
    rho = jnp.reciprocal(_dot(dgrad, step))
    # H <- (I - rho s y^T) H (I - rho y s^T) + rho s s^T; skipped when s.y == 0.
    left = jnp.eye(n, dtype=rho.dtype) - rho * step[:, None] * dgrad[None, :]
    H_new = _einsum("ij,jk,lk", left, s.H_k, left) + rho * step[:, None] * step[None, :]
    return s._replace(
        converged=jnp.linalg.norm(ls.g_k, ord=norm) < gtol, failed=ls.failed, k=s.k + 1,
        nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev, x_k=s.x_k + step, f_k=ls.f_k,
        g_k=ls.g_k, H_k=jnp.where(jnp.isfinite(rho), H_new, s.H_k), old_old_fval=s.f_k,
        line_search_status=ls.status)

  s = while_loop(lambda s: ~s.converged & ~s.failed & (s.k < maxiter), body, init)
  status = jnp.where(s.converged, 0, jnp.where(
      s.k == maxiter, 1, jnp.where(s.failed, 2 + s.line_search_status, -1)))
  return s._replace(status=status)


# ----------------------------------------------------------------------------
# L-BFGS


class _LBFGSState(NamedTuple):
  converged: Any
  failed: Any
  k: Any
  nfev: Any
  ngev: Any
  x_k: Any
  f_k: Any
  g_k: Any
  s_history: Any    # the last `maxcor` steps, oldest first
  y_history: Any    # the last `maxcor` gradient changes
  rho_history: Any
  gamma: Any        # the initial inverse-Hessian scale
  status: Any
  ls_status: Any


def _push(history, new):
  """Drops the oldest row of `history` and appends `new` as the last."""
  return jnp.roll(history, -1, axis=0).at[-1].set(new)


def _lbfgs_direction(s):
  """The two-loop recursion: -H_k g_k from the stored corrections."""
  dtype = s.rho_history.dtype
  m = s.rho_history.shape[0]
  used = jnp.where(s.k < m, s.k, m)

  def newest_to_oldest(j, carry):
    q, alphas = carry
    i = m - 1 - j
    alpha = s.rho_history[i] * _dot(jnp.conj(s.s_history[i]), q).real.astype(dtype)
    return q - alpha * jnp.conj(s.y_history[i]), alphas.at[i].set(alpha)

  q, alphas = fori_loop(0, used, newest_to_oldest,
                        (-jnp.conj(s.g_k), jnp.zeros_like(s.rho_history)))

  def oldest_to_newest(j, r):
    i = m - used + j
    beta = s.rho_history[i] * _dot(s.y_history[i], r).real.astype(dtype)
    return r + (alphas[i] - beta) * s.s_history[i]

  return fori_loop(0, used, oldest_to_newest, s.gamma * q)


def _minimize_lbfgs(fun, x0, maxiter=None, norm=np.inf, maxcor=10, ftol=2.220446049250313e-09,
                    gtol=1e-05, maxfun=None, maxgrad=None, maxls=20):
  """L-BFGS from `x0`; options as `jax._src.scipy.optimize._lbfgs._minimize_lbfgs`."""
  n = len(x0)
  dtype = dtypes.dtype(x0)
  if maxiter is None and maxfun is None and maxgrad is None:
    maxiter = n * 200
  maxiter, maxfun, maxgrad = (np.inf if v is None else v for v in (maxiter, maxfun, maxgrad))

  f_0, g_0 = value_and_grad(fun)(x0)
  init = _LBFGSState(
      converged=jnp.array(False), failed=jnp.array(False), k=0, nfev=1, ngev=1,
      x_k=x0, f_k=f_0, g_k=g_0,
      s_history=jnp.zeros((maxcor, n), dtype=dtype), y_history=jnp.zeros((maxcor, n), dtype=dtype),
      rho_history=jnp.zeros((maxcor,), dtype=dtype), gamma=1., status=0, ls_status=0)

  def body(s):
    p_k = _lbfgs_direction(s)
    ls = line_search(fun, s.x_k, p_k, old_fval=s.f_k, gfk=s.g_k, maxiter=maxls)
    step = jnp.asarray(ls.a_k).astype(p_k.dtype) * p_k
    dgrad = ls.g_k - s.g_k
    sy = jnp.real(_dot(dgrad, step))
    rho = jnp.reciprocal(sy).astype(dgrad.dtype)
    gamma = sy / jnp.real(_dot(jnp.conj(dgrad), dgrad))

    # Later checks win: a line-search failure is reported before maxiter, and so on.
    status = jnp.array(0)
    status = jnp.where(s.f_k - ls.f_k < ftol, 4, status)
    status = jnp.where(s.ngev >= maxgrad, 3, status)
    status = jnp.where(s.nfev >= maxfun, 2, status)
    status = jnp.where(s.k >= maxiter, 1, status)
    status = jnp.where(ls.failed, 5, status)
    converged = jnp.linalg.norm(ls.g_k, ord=norm) < gtol
    return s._replace(
        converged=converged, failed=(status > 0) & ~converged, k=s.k + 1,
        nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev,
        x_k=(s.x_k + step).astype(s.x_k.dtype), f_k=ls.f_k.astype(s.f_k.dtype),
        g_k=ls.g_k.astype(s.g_k.dtype),
        s_history=_push(s.s_history, step), y_history=_push(s.y_history, dgrad),
        rho_history=_push(s.rho_history, rho), gamma=gamma.astype(s.g_k.dtype),
        status=jnp.where(converged, 0, status), ls_status=ls.status)

  return while_loop(lambda s: ~s.converged & ~s.failed, body, init)


# ----------------------------------------------------------------------------
# minimize


def minimize(fun: Callable, x0, args: tuple = (), *, method: str, tol: float | None = None,
             options: Mapping[str, Any] | None = None) -> OptimizeResults:
  """Minimizes a scalar function of a 1-D array, starting from `x0`.

  Gradients come from automatic differentiation; the whole solve is one
  `while_loop`, so it works under `jit` and `vmap` (it is not differentiable
  with respect to `x0` or `args`). Results may differ slightly from SciPy's
  because the line search differs.

  Args:
    fun: ``fun(x, *args) -> scalar``, differentiable in `x`.
    x0: the initial guess, a 1-D array of shape ``(n,)`` and inexact dtype.
    args: a tuple of extra arguments to `fun`.
    method: ``"BFGS"`` or ``"l-bfgs-experimental-do-not-rely-on-this"``
      (case-insensitive).
    tol: accepted and ignored, as in JAX; use ``options["gtol"]``.
    options: solver options. BFGS: ``maxiter`` (default ``200 * n``),
      ``norm`` (default inf), ``gtol`` (1e-5), ``line_search_maxiter`` (10).
      L-BFGS: ``maxiter``, ``norm``, ``maxcor`` (10), ``ftol``, ``gtol``,
      ``maxfun``, ``maxgrad``, ``maxls`` (20).

  Returns:
    An `OptimizeResults`.

  Raises:
    TypeError: `args` is not a tuple, an unknown option, `x0` has more than
      one dimension, or `x0` is not inexact.
    IndexError: `x0` is a scalar.
    ValueError: an unknown `method`.

  Mirrors `jax.scipy.optimize.minimize`.
  """
  del tol  # JAX ignores it too
  if options is None:
    options = {}
  if not isinstance(args, tuple):
    raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")

  def fun_with_args(x):
    return fun(x, *args)

  if method.lower() == "bfgs":
    s = _minimize_bfgs(fun_with_args, _check_x0(x0), **options)
    hess_inv = s.H_k
  elif method.lower() == "l-bfgs-experimental-do-not-rely-on-this":
    s = _minimize_lbfgs(fun_with_args, _check_x0(x0), **options)
    hess_inv = None
  else:
    raise ValueError(f"Method {method} not recognized")
  return OptimizeResults(x=s.x_k, success=s.converged & ~s.failed, status=s.status, fun=s.f_k,
                         jac=s.g_k, hess_inv=hess_inv, nfev=s.nfev, njev=s.ngev, nit=s.k)
