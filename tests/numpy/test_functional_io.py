"""apply_along_axis, apply_over_axes, fromfunction, astype, einsum_path and the text,
bytes and file functions against NumPy and JAX 0.10.2 (issue 13)."""
import io

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp

A = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("fn, np_fn", [
    (lambda v: v[::-1] * 2, lambda v: v[::-1] * 2),
    (jnp.sum, np.sum),
    (lambda v: jnp.outer(v, v), lambda v: np.outer(v, v)),
])
def test_apply_along_axis_matches_numpy(axis, fn, np_fn):
  np.testing.assert_allclose(jnp.apply_along_axis(fn, axis, A),
                             np.apply_along_axis(np_fn, axis, A))


def test_apply_along_axis_passes_args_and_works_under_jit():
  f = lambda v, scale, shift=0.0: v * scale + shift
  np.testing.assert_allclose(jnp.apply_along_axis(f, 1, A, 2.0, shift=1.0), A * 2 + 1)
  np.testing.assert_allclose(xjax.jit(lambda a: jnp.apply_along_axis(jnp.max, 0, a))(A),
                             A.max(0))


@pytest.mark.parametrize("axes", [[0], [0, 2], [-1, 1], []])
def test_apply_over_axes_matches_numpy(axes):
  np.testing.assert_allclose(jnp.apply_over_axes(jnp.sum, A, axes),
                             np.apply_over_axes(np.sum, A, axes))


def test_apply_over_axes_wrong_rank_raises():
  with pytest.raises(ValueError, match="function is not returning an array of the correct shape"):
    jnp.apply_over_axes(lambda a, ax: a.sum(), A, [0])


@pytest.mark.parametrize("shape, dtype", [((2, 3), int), ((3,), float), ((2, 2, 2), np.float32),
                                          ((0, 2), int)])
def test_fromfunction_matches_numpy(shape, dtype):
  f = lambda *idx: sum(i * (k + 1) for k, i in enumerate(idx))
  got = jnp.fromfunction(f, shape, dtype=dtype)
  want = np.fromfunction(f, shape, dtype=dtype)
  np.testing.assert_allclose(got, want)
  assert got.shape == want.shape


def test_astype_function_form():
  x = jnp.arange(3.0)
  assert jnp.astype(x, jnp.int32).dtype == np.int32
  assert jnp.astype(1.5, "int32") == 1
  np.testing.assert_array_equal(jnp.astype(np.array([1j, 0]), bool), [True, False])
  assert jnp.astype(x, None).dtype == np.float32
  with pytest.raises(TypeError):
    jnp.astype([1, 2], np.int32)


def test_einsum_path_gives_numpy_path():
  path, report = jnp.einsum_path("ij,jk,kl->il", np.ones((2, 3)), np.ones((3, 40)),
                                 np.ones((40, 2)))
  assert path == [(1, 2), (0, 1)]  # JAX 0.10.2 gives the same
  assert "Optimized scaling" in report
  assert jnp.einsum_path("ij,jk->ik", np.ones((2, 3)), np.ones((3, 4)))[0] == [(0, 1)]


def test_array_str_and_repr():
  x = jnp.arange(3.0)
  assert jnp.array_str(x) == "[0. 1. 2.]"
  assert jnp.array_repr(x) == repr(x) == "Array([0., 1., 2.], dtype=float32)"
  with jnp.printoptions(precision=2):
    assert jnp.array_str(jnp.array([1 / 3])) == "[0.33]"
  assert jnp.get_printoptions()["precision"] == 8


def test_load_save_round_trip():
  buf = io.BytesIO()
  jnp.save(buf, jnp.arange(3))
  buf.seek(0)
  out = jnp.load(buf)
  assert isinstance(out, xjax.Array)
  np.testing.assert_array_equal(out, [0, 1, 2])
  buf = io.BytesIO()
  jnp.savez(buf, a=np.ones(2))
  buf.seek(0)
  np.testing.assert_array_equal(jnp.load(buf)["a"], np.ones(2))


def test_load_reads_bfloat16_back_and_keeps_non_numeric_arrays():
  # As in JAX: NumPy saves bfloat16 as 2-byte void, which load views as bfloat16 again;
  # an array of a dtype JAX cannot hold (strings) comes back as NumPy's array.
  buf = io.BytesIO()
  jnp.save(buf, jnp.array([1.5, -2.0], jnp.bfloat16))
  buf.seek(0)
  out = jnp.load(buf)
  assert isinstance(out, xjax.Array) and out.dtype == jnp.bfloat16
  np.testing.assert_array_equal(np.asarray(out, np.float32), [1.5, -2.0])
  buf = io.BytesIO()
  np.save(buf, np.array(["a", "b"]))
  buf.seek(0)
  out = jnp.load(buf)
  assert type(out) is np.ndarray and out.tolist() == ["a", "b"]


def test_frombuffer_fromstring_from_dlpack():
  np.testing.assert_array_equal(jnp.frombuffer(b"\x01\x02", dtype=jnp.uint8), [1, 2])
  np.testing.assert_array_equal(jnp.frombuffer(b"\x01\x02\x03", dtype=jnp.uint8, count=2,
                                               offset=1), [2, 3])
  np.testing.assert_array_equal(jnp.fromstring("1 2", dtype=int, sep=" "), [1, 2])
  out = jnp.from_dlpack(np.arange(2))
  assert isinstance(out, xjax.Array)
  np.testing.assert_array_equal(out, [0, 1])
  with pytest.raises(ValueError):
    jnp.frombuffer(b"\x01\x02\x03", dtype=np.int16)


@pytest.mark.parametrize("name", ["fromiter", "fromfile"])
def test_impure_readers_refuse_as_jax(name):
  with pytest.raises(NotImplementedError, match=f"jnp.{name}\\(\\) is not implemented because "
                                                "it may be non-pure"):
    getattr(jnp, name)(range(3), int)


def test_numpy_type_names():
  assert jnp.object_ is np.object_ and jnp.flexible is np.flexible
  assert jnp.character is np.character
  assert issubclass(jnp.ComplexWarning, RuntimeWarning)
  assert jnp.iterable([1]) and not jnp.iterable(1)
