"""Typed PRNG keys as first-class avals: ``key<fry>[K]`` values through jit, vmap,
grad, scan and cond, against the same computations eagerly and on raw key data.

(The printed jaxprs are compared with JAX 0.10.2's in
tests/core/test_derivative_printing.py, cases ``key_*``.)
"""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax import random
from xjax._src import core


def _data(keys):
  return np.asarray(random.key_data(keys))


def test_key_avals_have_the_key_dtype_and_float0_tangents():
  k = random.key(0)
  jaxpr = xjax.make_jaxpr(lambda k: random.split(k, 3))(k).jaxpr
  (invar,), (outvar,) = jaxpr.invars, jaxpr.outvars
  assert invar.aval.dtype == random.key_dtype() and invar.aval.shape == ()
  assert outvar.aval.str_short(True) == "key<fry>[3]"
  assert invar.aval.to_tangent_aval().str_short(True) == "float0[]"
  assert core.physical_aval(outvar.aval).str_short(True) == "u32[3,2]"


def test_jit_takes_and_returns_key_arrays():
  k = random.key(7)
  out = xjax.jit(lambda k: random.split(k, 4))(k)
  assert out.dtype == random.key_dtype() and out.shape == (4,)
  np.testing.assert_array_equal(_data(out), _data(random.split(k, 4)))
  text = xjax.jit(lambda k: random.split(k)).lower(k).as_text()
  assert "tensor<2xui32>" in text and "tensor<2x2xui32>" in text


@pytest.mark.parametrize("index", [1, -1, slice(1, 3), (np.array([0, 2]),)])
def test_indexing_under_jit_matches_eager(index):
  keys = random.split(random.key(3), 4)
  eager = keys[index]
  jitted = xjax.jit(lambda ks: ks[index])(keys)
  assert eager.shape == jitted.shape
  np.testing.assert_array_equal(_data(eager), _data(jitted))
  np.testing.assert_array_equal(_data(eager), _data(random.split(random.key(3), 4))[index])


def test_dynamic_index_reshape_transpose_concatenate():
  keys = random.split(random.key(5), (2, 3))
  data = _data(keys)
  f = xjax.jit(lambda ks, i: (ks[i], ks.reshape(3, 2), ks.T,
                              jnp.concatenate([ks[0], ks[1]])))
  row, reshaped, transposed, joined = f(keys, np.int32(1))
  np.testing.assert_array_equal(_data(row), data[1])
  np.testing.assert_array_equal(_data(reshaped), data.reshape(3, 2, 2))
  np.testing.assert_array_equal(_data(transposed), data.transpose(1, 0, 2))
  np.testing.assert_array_equal(_data(joined), data.reshape(6, 2))


@pytest.mark.parametrize("wrap", [lambda f: f, xjax.jit])
def test_vmap_over_key_arrays(wrap):
  keys = random.split(random.key(1), 3)
  got = wrap(xjax.vmap(lambda k: random.uniform(k, (2,))))(keys)
  want = np.stack([np.asarray(random.uniform(k, (2,))) for k in keys])
  np.testing.assert_array_equal(np.asarray(got), want)
  split = xjax.vmap(random.split)(keys)
  assert split.shape == (3, 2)
  np.testing.assert_array_equal(_data(split), np.stack([_data(random.split(k)) for k in keys]))


def test_scan_carries_keys_and_cond_selects_them():
  def body(k, _):
    k, sub = random.split(k)
    return k, random.normal(sub)
  k = random.key(2)
  last, xs = lax.scan(body, k, None, length=3)
  ref, want = k, []
  for _ in range(3):
    ref, sub = random.split(ref)
    want.append(float(random.normal(sub)))
  np.testing.assert_allclose(np.asarray(xs), want)
  np.testing.assert_array_equal(_data(last), _data(ref))
  for p in (True, False):
    got = xjax.jit(lambda p, k: lax.cond(p, lambda k: random.split(k)[1], lambda k: k, k))(p, k)
    np.testing.assert_array_equal(_data(got), _data(random.split(k)[1] if p else k))


def test_grad_with_a_key_argument():
  k = random.key(4)
  f = lambda x, k: (x * random.uniform(k, (2,))).sum()
  g = xjax.grad(f)(np.float32(1.5), k)
  np.testing.assert_allclose(g, np.asarray(random.uniform(k, (2,))).sum(), rtol=1e-6)
