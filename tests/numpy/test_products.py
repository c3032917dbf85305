"""dot, matmul (``@``), vdot, inner, outer and tensordot against NumPy: shapes with batch
broadcasting, dtype promotion and weak types, printed jaxprs and errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp
from jnp_checks import bf16, check, rand

MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                 ((5, 2, 3), (5, 3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)),
                 ((1, 2, 3), (5, 3, 4)), ((2, 1, 2, 3), (5, 3, 4)), ((1, 1, 2, 3), (1, 3, 2)),
                 ((4, 2, 3), (3,)), ((3,), (4, 3, 2)), ((0, 3), (3, 2)), ((2, 0), (0, 4))]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, bf16, np.complex64, np.bool_])
def test_matmul_matches_numpy(rng, shapes, dtype):
  a = rand(rng, shapes[0], dtype)
  b = rand(rng, shapes[1], dtype)
  tol = 5e-2 if dtype == bf16 else 1e-5
  check(jnp.matmul, np.matmul, a, b, dtype=a.dtype, tol=tol)
  check(lambda x, y: x @ y, lambda x, y: x @ y, a, b, dtype=a.dtype, tol=tol)


@settings(max_examples=20, deadline=None)
@given(batch=st.lists(st.integers(1, 3), min_size=0, max_size=2),
       drop_a=st.integers(0, 2), drop_b=st.integers(0, 2), ones_a=st.booleans())
def test_matmul_batch_broadcasting_hypothesis(batch, drop_a, drop_b, ones_a):
  rng = np.random.default_rng(0)
  batch_a = batch[drop_a:]
  batch_a = [1] * len(batch_a) if ones_a else batch_a
  a = rand(rng, (*batch_a, 2, 3), np.float32)
  b = rand(rng, (*batch[drop_b:], 3, 2), np.float32)
  check(jnp.matmul, np.matmul, a, b)


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 4)),
                                    ((2, 3, 4), (4, 5)), ((2, 3, 4), (5, 4, 2)), ((), (3,)),
                                    ((2, 3), ())], ids=str)
def test_dot_matches_numpy(rng, shapes):
  a = rand(rng, shapes[0], np.float32)
  b = rand(rng, shapes[1], np.float32)
  check(jnp.dot, np.dot, a, b, tol=1e-5)
  check(lambda x, y: x.dot(y), lambda x, y: np.dot(x, y), a, b, tol=1e-5)


def test_products_promote_dtypes_and_keep_weak_types(rng):
  a = rand(rng, (2, 3), np.int32)
  b = rand(rng, (3,), np.float32)
  check(jnp.dot, np.dot, a, b, dtype=np.float32, tol=1e-5)
  check(jnp.matmul, np.matmul, a, b, dtype=np.float32, tol=1e-5)
  out = jnp.dot(2, jnp.arange(3))
  assert out.dtype == np.int32 and not out.weak_type
  out = jnp.dot(jnp.asarray(2.0), jnp.asarray(3.0))
  assert out.weak_type
  assert jnp.dot(a, b, preferred_element_type=jnp.float32).dtype == np.float32
  assert jnp.matmul(jnp.ones(3, bf16), jnp.ones(3, np.float32)).dtype == np.float32


def test_vdot_inner_outer_tensordot_match_numpy(rng):
  a = rand(rng, (2, 3), np.float32)
  b = rand(rng, (2, 3), np.float32)
  c = rand(rng, (3, 4), np.float32)
  check(jnp.vdot, np.vdot, a, b, tol=1e-5)
  z = rand(rng, (3,), np.complex64)
  check(jnp.vdot, np.vdot, z, z, tol=1e-5)
  check(jnp.inner, np.inner, a, b, tol=1e-5)
  check(jnp.inner, np.inner, a, np.float32(2), tol=1e-5)
  check(jnp.outer, np.outer, a, c, tol=1e-5)
  check(jnp.tensordot, np.tensordot, a, b, tol=1e-5)
  check(lambda x, y: jnp.tensordot(x, y, 1), lambda x, y: np.tensordot(x, y, 1), a, c, tol=1e-5)
  check(lambda x, y: jnp.tensordot(x, y, axes=([1], [0])),
        lambda x, y: np.tensordot(x, y, axes=([1], [0])), a, c, tol=1e-5)
  check(lambda x, y: jnp.tensordot(x, y, axes=(1, 0)), lambda x, y: np.tensordot(x, y, axes=(1, 0)),
        a, c, tol=1e-5)
  with pytest.raises(TypeError, match="Number of tensordot axes"):
    jnp.tensordot(a, c, 3)
  with pytest.raises(TypeError, match="tensordot requires axes lists to have equal length"):
    jnp.tensordot(a, c, ([0, 1], [0]))


def test_product_errors_match_jax():
  with pytest.raises(TypeError) as info:
    jnp.ones((2, 3)) @ jnp.ones((2, 3))
  assert str(info.value) == ("dot_general requires contracting dimensions to have the same "
                             "shape, got (3,) and (2,).")
  with pytest.raises(TypeError, match=r"got \(4,\) and \(5,\)"):
    jnp.dot(jnp.ones((3, 4)), jnp.ones(5))
  with pytest.raises(ValueError, match="matmul input operand 0 must have ndim at least 1"):
    jnp.matmul(1.0, jnp.ones(3))
  with pytest.raises(ValueError, match="Incompatible types for matmul arguments"):
    jnp.matmul(jnp.ones((2, 2, 3)), jnp.ones((4, 3, 2)))
  with pytest.raises(TypeError, match="dot requires ndarray or scalar arguments"):
    jnp.dot([1, 2], jnp.ones(2))


def test_products_print_like_jax():
  x = np.ones((5, 2, 3), np.float32)
  y = np.ones((5, 3, 4), np.float32)
  assert str(xjax.make_jaxpr(jnp.matmul)(x, y)) == (
      "{ lambda ; a:f32[5,2,3] b:f32[5,3,4]. let\n    c:f32[5,2,4] = dot_general[\n"
      "      dimension_numbers=(([2], [1]), ([0], [0]))\n      preferred_element_type=float32\n"
      "    ] a b\n  in (c,) }")
  text = str(xjax.make_jaxpr(lambda a, b: jnp.dot(a + 1, b + 1))(x[0], y[0, :, 0]))
  assert "dimension_numbers=(([1], [0]), ([], []))" in text
  text = str(xjax.make_jaxpr(jnp.outer)(x[0, 0], y[0, 0]))
  assert "mul" in text and "broadcast_in_dim[broadcast_dimensions=(0,)]" in text


@pytest.mark.parametrize("subscripts,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ij,jk,k->i", [(2, 3), (3, 4), (4,)]),
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]), ("...ij,...jk->...ik", [(5, 2, 3), (5, 3, 4)]),
    ("i,i->", [(4,), (4,)]), ("i,j->ij", [(3,), (4,)]), ("ij,ij->i", [(2, 3), (2, 3)]),
    ("...j,j", [(2, 3), (3,)]), ("ijk,jl->kil", [(2, 3, 4), (3, 5)])], ids=str)
def test_einsum_matches_numpy(rng, subscripts, shapes):
  ops = [rand(rng, s, np.float32) for s in shapes]
  check(lambda *xs: jnp.einsum(subscripts, *xs), lambda *xs: np.einsum(subscripts, *xs), *ops,
        tol=1e-5)


@pytest.mark.parametrize("subscripts,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("aa->a", [(3, 3)]), ("aab,bc->ac", [(2, 2, 3), (3, 4)]),
    ("ba,b->", [(3, 2), (3,)]), ("fdf,cdd,ccd,afe->ae", [(2, 3, 2), (4, 3, 3), (4, 4, 3),
                                                       (5, 2, 6)])], ids=str)
def test_einsum_bool_sums_are_or(rng, subscripts, shapes):
  ops = [rng.random(s) < 0.3 for s in shapes]
  out = jnp.einsum(subscripts, *ops)
  assert out.dtype == np.bool_
  np.testing.assert_array_equal(out, np.einsum(subscripts, *ops))


@pytest.mark.parametrize("subscripts,shapes", [
    ("cij,cjk->cik", [(1, 4, 5), (3, 5, 6)]), ("cij,cjk->cik", [(1, 4, 5), (3, 1, 6)]),
    ("ij,jk->ik", [(2, 1), (5, 3)]), ("...ij,...j", [(2, 1, 3, 3), (2, 4, 3)])], ids=str)
def test_einsum_broadcasts_size_one_axes(rng, subscripts, shapes):
  ops = [rand(rng, s, np.float32) for s in shapes]
  check(lambda *xs: jnp.einsum(subscripts, *xs), lambda *xs: np.einsum(subscripts, *xs), *ops,
        tol=1e-5)
  with pytest.raises(ValueError, match="broadcast"):
    jnp.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((4, 5)))


def test_einsum_paths(rng):
  ops = [rand(rng, s, np.float32) for s in [(2, 3), (2, 4), (2, 5)]]
  want = np.einsum("ij,ik,il->jkl", *ops)
  for optimize in ("auto", "greedy", "optimal", True, False, [(0, 2), (0, 1)],
                   ["einsum_path", (1, 2), (0, 1)]):
    np.testing.assert_allclose(jnp.einsum("ij,ik,il->jkl", *ops, optimize=optimize), want,
                               rtol=1e-5)
  with pytest.raises(NotImplementedError, match="3 or more operands"):
    jnp.einsum("ij,ik,il->jkl", *ops, optimize=[(0, 1, 2)])
  with pytest.raises(KeyError, match="not found"):
    jnp.einsum("ij,ik,il->jkl", *ops, optimize="fastest")
  with pytest.raises(ValueError, match="path"):
    jnp.einsum("ij,ik,il->jkl", *ops, optimize=[(0, 1)])
  # the path einsum takes is the one einsum_path reports: least flops for three operands
  a, b, c = np.ones((2, 3)), np.ones((3, 40)), np.ones((40, 2))
  assert jnp.einsum_path("ij,jk,kl->il", a, b, c)[0] == [(1, 2), (0, 1)]
  text = str(xjax.make_jaxpr(lambda *xs: jnp.einsum("ij,jk,kl->il", *xs))(a, b, c))
  assert "f32[3,2] = dot_general" in text  # b @ c first


def test_einsum_dtypes_and_errors(rng):
  a = rand(rng, (2, 3), np.int32)
  b = rand(rng, (3, 2), np.float32)
  check(lambda x, y: jnp.einsum("ij,jk", x, y), lambda x, y: np.einsum("ij,jk", x, y), a, b,
        dtype=np.float32, tol=1e-5)
  # As in JAX: one dot_general of the mixed operands, inlined (no jit[name=_einsum]).
  assert str(xjax.make_jaxpr(lambda x, y: jnp.einsum("ij,jk", x, y))(a, b)) == (
      "{ lambda ; a:i32[2,3] b:f32[3,2]. let\n    c:f32[2,2] = dot_general[\n"
      "      dimension_numbers=(([1], [0]), ([], []))\n      preferred_element_type=float32\n"
      "    ] a b\n  in (c,) }")
  with pytest.raises(ValueError, match="einsum"):
    jnp.einsum("ij,jk->il", a, b)


def test_dot_preferred_type_is_computed_as_jax_lowers_it():
  # JAX 0.10.2 hands operands of one dtype to XLA unconverted (XLA produces a narrower or
  # wider result itself) and converts mixed operands to the result type first. Converting
  # f32 operands to f16 before the product would round twice and change the answer.
  dn = (((1,), (0,)), ((), ()))
  a = np.ones((2, 3), np.float32)
  text = xjax.jit(lambda x, y: xjax.lax.dot_general(x, y, dn, preferred_element_type=np.float16)
                  ).lower(a, a.T).as_text()
  assert "stablehlo.convert" not in text and "-> tensor<2x2xf16>" in text
  mixed = xjax.jit(lambda x, y: xjax.lax.dot_general(x, y, dn)).lower(
      a.astype(np.int8), a.T).as_text()
  assert mixed.count("stablehlo.convert") == 1
  rng = np.random.default_rng(0)
  x, y = rng.standard_normal((8, 64), np.float32), rng.standard_normal((64, 8), np.float32)
  got = xjax.lax.dot_general(x, y, dn, preferred_element_type=np.float16)
  np.testing.assert_allclose(np.asarray(got, np.float32), (x.astype(np.float64) @ y), rtol=2e-3,
                             atol=2e-3)
