"""The strong-Wolfe line search used by `xjax.scipy.optimize.minimize`.

Algorithms 3.5 (bracketing) and 3.6 (zoom) of Nocedal and Wright,
*Numerical Optimization* (1999), pp. 59-61, with the choices JAX 0.10.2
makes: the first trial step comes from the previous decrease, later steps
double, and zoom tries a cubic, then a quadratic interpolant, then bisection.
Both loops are `while_loop`s over NamedTuple states whose branches are
`jnp.where` selections, so the search traces once under `jit` and `vmap`.
"""
from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple


import xjax.numpy as jnp
from xjax._src import dtypes
from xjax._src.api import value_and_grad
from xjax._src.lax.control_flow.loops import while_loop
from xjax._src.lax.dot import Precision
from xjax._src.numpy.util import promote_dtypes_inexact

_dot = partial(jnp.dot, precision=Precision.HIGHEST)


def _replace_where(pred, state, **fields):
  """`state` with each named field set to its new value where `pred` holds."""
  return state._replace(**{k: jnp.where(pred, v, getattr(state, k)) for k, v in fields.items()})


def _cubic_minimizer(a, fa, fpa, b, fb, c, fc):
  """The minimizer of the cubic through (a, fa) with slope fpa, (b, fb) and (c, fc)."""
  db, dc = b - a, c - a
  rb, rc = fb - fa - fpa * db, fc - fa - fpa * dc
  denom = (db * dc) ** 2 * (db - dc)
  A = (dc ** 2 * rb - db ** 2 * rc) / denom
  B = (db ** 3 * rc - dc ** 3 * rb) / denom
  return a + (-B + jnp.sqrt(B * B - 3. * A * fpa)) / (3. * A)


def _quadratic_minimizer(a, fa, fpa, b, fb):
  """The minimizer of the parabola through (a, fa) with slope fpa, and (b, fb)."""
  db = b - a
  curvature = (fb - fa - fpa * db) / db ** 2
  return a - fpa / (2. * curvature)


class _ZoomState(NamedTuple):
  done: Any
  failed: Any
  j: Any
  a_lo: Any
  phi_lo: Any
  dphi_lo: Any
  a_hi: Any
  phi_hi: Any
  dphi_hi: Any
  a_rec: Any        # the previous a_hi or a_lo, the third point of the cubic
  phi_rec: Any
  a_star: Any
  phi_star: Any
  dphi_star: Any
  g_star: Any
  nfev: Any
  ngev: Any


def _zoom(phi_dphi_grad, armijo_fails, curvature_holds, a_lo, phi_lo, dphi_lo,
          a_hi, phi_hi, dphi_hi, g_0, skip):
  """Shrinks [a_lo, a_hi] until a step satisfies the strong Wolfe conditions.

  Runs no iteration where `skip` is true. Fails when the interval gets
  narrower than 1e-5 (1e-10 in 64-bit) or after 30 iterations.
  """
  init = _ZoomState(
      done=False, failed=False, j=0,
      a_lo=a_lo, phi_lo=phi_lo, dphi_lo=dphi_lo,
      a_hi=a_hi, phi_hi=phi_hi, dphi_hi=dphi_hi,
      a_rec=(a_lo + a_hi) / 2., phi_rec=(phi_lo + phi_hi) / 2.,
      a_star=1., phi_star=phi_lo, dphi_star=dphi_lo, g_star=g_0,
      nfev=0, ngev=0)

  def body(s):
    width = s.a_hi - s.a_lo
    left, right = jnp.minimum(s.a_lo, s.a_hi), jnp.maximum(s.a_lo, s.a_hi)
    min_width = 1e-5 if dtypes.finfo(width.dtype).bits < 64 else 1e-10
    failed = s.failed | (width <= min_width)

    # The cubic needs a third point (there is none at j == 0) and is
    # sometimes NaN; then its bounds check fails and the next choice is used.
    a_cubic = _cubic_minimizer(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi, s.a_rec, s.phi_rec)
    use_cubic = (s.j > 0) & (a_cubic > left + 0.2 * width) & (a_cubic < right - 0.2 * width)
    a_quad = _quadratic_minimizer(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi)
    use_quad = ~use_cubic & (a_quad > left + 0.1 * width) & (a_quad < right - 0.1 * width)
    a_j = jnp.where(use_cubic, a_cubic, jnp.where(use_quad, a_quad, (s.a_lo + s.a_hi) / 2.))

    phi_j, dphi_j, g_j = phi_dphi_grad(a_j)
    phi_j = phi_j.astype(s.phi_lo.dtype)
    dphi_j = dphi_j.astype(s.dphi_lo.dtype)
    g_j = g_j.astype(s.g_star.dtype)

    j_is_hi = armijo_fails(a_j, phi_j) | (phi_j >= s.phi_lo)
    j_is_star = curvature_holds(dphi_j) & ~j_is_hi
    j_is_lo = ~j_is_hi & ~j_is_star
    lo_is_hi = j_is_lo & (dphi_j * width >= 0.)   # the old a_lo becomes a_hi

    s = _replace_where(j_is_hi, s, a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j,
                       a_rec=s.a_hi, phi_rec=s.phi_hi)
    s = _replace_where(j_is_star, s, a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j)
    s = _replace_where(lo_is_hi, s, a_hi=s.a_lo, phi_hi=s.phi_lo, dphi_hi=s.dphi_lo,
                       a_rec=s.a_hi, phi_rec=s.phi_hi)
    s = _replace_where(j_is_lo & ~lo_is_hi, s, a_rec=s.a_lo, phi_rec=s.phi_lo)
    s = _replace_where(j_is_lo, s, a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j)
    # JAX allows more zoom iterations than SciPy (30 against 10).
    return s._replace(done=s.done | j_is_star, failed=failed | (s.j + 1 >= 30), j=s.j + 1,
                      nfev=s.nfev + 1, ngev=s.ngev + 1)

  return while_loop(lambda s: ~s.done & ~skip & ~s.failed, body, init)


class _LineSearchState(NamedTuple):
  done: Any
  failed: Any
  i: Any
  a_i1: Any         # the previous trial step and its phi, dphi
  phi_i1: Any
  dphi_i1: Any
  nfev: Any
  ngev: Any
  a_star: Any
  phi_star: Any
  dphi_star: Any
  g_star: Any


class _LineSearchResults(NamedTuple):
  """What `line_search` returns.

  failed: the strong Wolfe conditions were not met. nit: iterations run.
  nfev, ngev: function and gradient evaluations. k: the final iteration
  counter. a_k: the step size. f_k, g_k: the function value and gradient at
  ``xk + a_k * pk``. status: 0 success, 1 zoom failed, 3 maxiter reached.
  """
  failed: Any
  nit: Any
  nfev: Any
  ngev: Any
  k: Any
  a_k: Any
  f_k: Any
  g_k: Any
  status: Any


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9,
                maxiter=20):
  """Finds a step along `pk` from `xk` meeting the strong Wolfe conditions.

  Args:
    f: a differentiable scalar function of a 1-D array.
    xk: the start point, shape ``(n,)``.
    pk: a descent direction, shape ``(n,)``.
    old_fval, gfk: ``f(xk)`` and its gradient, if already known.
    old_old_fval: ``f`` at the previous iterate; sets the first trial step.
    c1, c2: the sufficient-decrease and curvature constants.
    maxiter: the most bracketing iterations.

  Returns:
    A `_LineSearchResults`. Mirrors `jax._src.scipy.optimize.line_search.line_search`.
  """
  xk, pk = promote_dtypes_inexact(xk, pk)

  def phi_dphi_grad(t):
    value, grad = value_and_grad(f)(xk + jnp.array(t, dtype=pk.dtype) * pk)
    return value, jnp.real(_dot(grad, pk)), grad

  evaluated_at_0 = old_fval is None or gfk is None
  if evaluated_at_0:
    phi_0, dphi_0, gfk = phi_dphi_grad(0)
  else:
    phi_0, dphi_0 = old_fval, jnp.real(_dot(gfk, pk))
  if old_old_fval is None:
    first_step = 1
  else:
    guess = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
    first_step = jnp.where(guess > 1, 1.0, guess)

  def armijo_fails(a, phi):
    return phi > phi_0 + c1 * a * dphi_0

  def curvature_holds(dphi):
    return jnp.abs(dphi) <= -c2 * dphi_0

  init = _LineSearchState(
      done=jnp.array(False), failed=jnp.array(False),
      # Iterations count from 1, as in Nocedal and Wright (SciPy starts at 0).
      i=1, a_i1=0., phi_i1=phi_0, dphi_i1=dphi_0,
      nfev=int(evaluated_at_0), ngev=int(evaluated_at_0),
      a_star=0., phi_star=phi_0, dphi_star=dphi_0, g_star=gfk)

  def body(s):
    a_i = jnp.where(s.i == 1, first_step, s.a_i1 * 2.)
    phi_i, dphi_i, g_i = phi_dphi_grad(a_i)

    zoom_lo_hi = armijo_fails(a_i, phi_i) | ((phi_i >= s.phi_i1) & (s.i > 1))
    accept = curvature_holds(dphi_i) & ~zoom_lo_hi
    zoom_hi_lo = (dphi_i >= 0.) & ~zoom_lo_hi & ~accept
    # Both zooms are traced; each runs no iteration unless its case holds.
    z1 = _zoom(phi_dphi_grad, armijo_fails, curvature_holds, s.a_i1, s.phi_i1, s.dphi_i1,
               a_i, phi_i, dphi_i, gfk, ~zoom_lo_hi)
    z2 = _zoom(phi_dphi_grad, armijo_fails, curvature_holds, a_i, phi_i, dphi_i,
               s.a_i1, s.phi_i1, s.dphi_i1, gfk, ~zoom_hi_lo)

    star = dict(a_star=s.a_star, phi_star=s.phi_star, dphi_star=s.dphi_star, g_star=s.g_star)
    for pred, new in [(zoom_lo_hi, z1), (accept, None), (zoom_hi_lo, z2)]:
      values = (a_i, phi_i, dphi_i, g_i) if new is None else (
          new.a_star, new.phi_star, new.dphi_star, new.g_star)
      star = {k: jnp.where(pred, v, star[k]) for k, v in zip(star, values, strict=True)}
    return s._replace(
        done=s.done | zoom_lo_hi | accept | zoom_hi_lo,
        failed=s.failed | (zoom_lo_hi & z1.failed) | (zoom_hi_lo & z2.failed),
        i=s.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i,
        nfev=s.nfev + 1 + z1.nfev + z2.nfev, ngev=s.ngev + 1 + z1.ngev + z2.ngev, **star)

  s = while_loop(lambda s: ~s.done & (s.i <= maxiter) & ~s.failed, body, init)

  status = jnp.where(s.failed, jnp.array(1), jnp.where(s.i > maxiter, jnp.array(3), jnp.array(0)))
  # Below 64 bits a tiny step would stall the optimizer: floor it at 1e-8.
  a_k = jnp.asarray(s.a_star)
  if dtypes.finfo(a_k.dtype).bits != 64:
    a_k = jnp.where(jnp.abs(a_k) < 1e-8, jnp.sign(a_k) * 1e-8, a_k)
  return _LineSearchResults(failed=s.failed | ~s.done, nit=s.i - 1, nfev=s.nfev, ngev=s.ngev,
                            k=s.i, a_k=a_k, f_k=s.phi_star, g_k=s.g_star, status=status)
