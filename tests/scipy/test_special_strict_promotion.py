"""jax.scipy.special (and jax.nn.logsumexp) under the options JAX's own tests run with:
implicit rank promotion raises and dtype promotion is strict, so xjax's implementations
broadcast and cast explicitly (the values are those of the default options)."""
import contextlib

import numpy as np
import pytest
import scipy.special as osp

import xjax
import xjax.scipy.special as hsp

Z = np.array([-0.5 + 0j, -1.5 + 0j, 0.5 + 1j, 0.5 - 1j, -2.5 + 1e-12j, -2.5 - 1e-12j,
              3.0 + 4.0j, 1e3 - 2.0j], np.complex64)


@contextlib.contextmanager
def _strict():
  with xjax.numpy_rank_promotion("raise"), xjax.numpy_dtype_promotion("strict"):
    yield


@pytest.mark.parametrize("name,ref", [("gamma", osp.gamma), ("loggamma", osp.loggamma),
                                      ("wofz", osp.wofz)])
def test_complex_functions_under_strict_promotion(name, ref):
  fn = getattr(hsp, name)
  want = fn(Z)
  with _strict():
    got = fn(Z)
    got_2d = fn(Z.reshape(2, 4))
  np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
  np.testing.assert_array_equal(np.asarray(got_2d).ravel(), np.asarray(want))
  finite = np.isfinite(ref(Z.astype(np.complex128)))
  np.testing.assert_allclose(np.asarray(got)[finite], ref(Z.astype(np.complex128))[finite],
                             rtol=2e-4, atol=1e-5)


def test_owens_t_under_strict_promotion():
  h = np.array([[0.1, 1.5, 3.0], [0.5, 2.0, 0.0]], np.float32)
  a = np.array([[0.3, 0.9, 2.0], [1.0, 0.1, 5.0]], np.float32)
  with _strict():
    got = hsp.owens_t(h, a)
  np.testing.assert_allclose(np.asarray(got), osp.owens_t(h, a), rtol=1e-5, atol=1e-7)


def test_logsumexp_of_complex_input_matches_jax():
  # Values recorded from JAX 0.10.2: the complex log of the sum, shifted by the largest
  # real part; with return_sign, log|sum| and the phase.
  a = np.array([[1 + 1j, 2 - 0.5j, -3 + 2j]], np.complex64)
  with _strict():
    out = hsp.logsumexp(a)
    lse, sign = hsp.logsumexp(a, return_sign=True)
  np.testing.assert_allclose(complex(out), 2.0824642 - 0.15135525j, rtol=1e-6)
  np.testing.assert_allclose(float(lse), 2.0824642, rtol=1e-6)
  np.testing.assert_allclose(complex(sign), 0.98856753 - 0.15077801j, rtol=1e-6)
  np.testing.assert_allclose(complex(hsp.logsumexp(a, b=np.array([1., -2., 0.5], np.float32)
                                                   .astype(np.complex64))),
                             2.6985419 + 2.4570525j, rtol=1e-6)
  np.testing.assert_allclose(complex(hsp.logsumexp(a, axis=1, keepdims=True)[0, 0]),
                             2.0824642 - 0.15135525j, rtol=1e-6)
