"""jnp.pad in every mode against np.pad: eager, under jit and vmap, its gradient and errors."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from tests.numpy.jnp_checks import bf16, check, rand

MODES = [
    ("constant", {}), ("constant", {"constant_values": 7}),
    ("constant", {"constant_values": ((1, 2), (3, 4))}),
    ("edge", {}), ("wrap", {}), ("empty", {}),
    ("reflect", {}), ("reflect", {"reflect_type": "odd"}),
    ("symmetric", {}), ("symmetric", {"reflect_type": "odd"}),
    ("linear_ramp", {}), ("linear_ramp", {"end_values": (3, -2)}),
    ("linear_ramp", {"end_values": ((1, 2), (-1, 5))}),
    ("maximum", {}), ("minimum", {}), ("mean", {}), ("median", {}),
    ("maximum", {"stat_length": 1}), ("mean", {"stat_length": (2, 3)}),
    ("median", {"stat_length": ((1, 2), (3, 1))}), ("minimum", {"stat_length": 100}),
]
# Widths wider than the axis make reflect/symmetric/wrap repeat their pattern.
WIDTHS = [0, 1, (2, 0), ((0, 3), (9, 1)), 11]


def _reference(a, width, mode, kwargs):
  want = np.pad(a, width, mode=mode, **kwargs)
  if mode == "empty":  # NumPy leaves garbage there; JAX writes zeros
    want = np.where(np.pad(np.ones(a.shape, bool), width), want, 0)
  return want


@pytest.mark.parametrize("mode, kwargs", MODES, ids=[f"{m}-{k}" for m, k in MODES])
@pytest.mark.parametrize("width", WIDTHS, ids=str)
def test_pad_matches_numpy(rng, mode, kwargs, width):
  x = rand(rng, (3, 4), np.float32)
  check(lambda a: jnp.pad(a, width, mode=mode, **kwargs),
        lambda a: _reference(a, width, mode, kwargs), x)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_, bf16, np.complex64],
                         ids=str)
@pytest.mark.parametrize("mode", ["constant", "edge", "wrap", "reflect", "symmetric", "empty",
                                  "maximum", "minimum"])
def test_pad_keeps_every_dtype(rng, dtype, mode):
  if mode in ("maximum", "minimum") and np.dtype(dtype).kind == "c":
    pytest.skip("NumPy and JAX order complex numbers differently")  # not an xjax gap
  x = rand(rng, (2, 5), dtype)
  want_dtype = np.dtype(dtype)
  check(lambda a: jnp.pad(a, ((1, 6), (2, 3)), mode=mode),
        lambda a: _reference(a, ((1, 6), (2, 3)), mode, {}).astype(
            np.float32 if want_dtype == bf16 else want_dtype),
        x, dtype=want_dtype)


@pytest.mark.parametrize("mode", ["mean", "median"])
def test_integer_statistics_are_rounded(mode):
  x = np.array([1, 2, 2, 4], np.int32)  # mean 2.25 -> 2; the first two: 1.5 -> 2 (half to even)
  check(lambda a: jnp.pad(a, 2, mode=mode), lambda a: np.pad(a, 2, mode=mode), x)
  check(lambda a: jnp.pad(a, 1, mode=mode, stat_length=2),
        lambda a: np.pad(a, 1, mode=mode, stat_length=2), x)


def test_integer_linear_ramp_truncates_like_jax():
  # Recorded from JAX 0.10.2 (the ramp is linspace in the integer dtype).
  x = np.array([-7, -4, -1, 2], np.int32)
  np.testing.assert_array_equal(jnp.pad(x, (9, 0), mode="linear_ramp", end_values=3),
                                [3, 1, 0, -1, -2, -3, -4, -5, -6, -7, -4, -1, 2])


def test_odd_reflection_of_a_length_one_axis():
  x = np.array([[5.0]], np.float32)
  for mode in ("reflect", "symmetric"):
    check(lambda a: jnp.pad(a, 3, mode=mode, reflect_type="odd"),
          lambda a: np.pad(a, 3, mode=mode, reflect_type="odd"), x)


def test_zero_d_and_empty_arrays():
  assert jnp.pad(jnp.float32(3), 2, mode="edge").shape == ()
  e = np.zeros((2, 0), np.float32)
  check(lambda a: jnp.pad(a, ((1, 1), (0, 0)), mode="edge"),
        lambda a: np.pad(a, ((1, 1), (0, 0)), mode="edge"), e)
  check(lambda a: jnp.pad(a, 2), lambda a: np.pad(a, 2), e)
  for mode in ("edge", "wrap", "reflect", "symmetric"):
    with pytest.raises(ValueError, match=f"Cannot apply '{mode}' padding to empty axis"):
      jnp.pad(e, 1, mode=mode)


def test_callable_mode_as_in_jax_docs():
  def custom_pad(row, pad_width, iaxis, kwargs):
    before, after = pad_width
    row = row.at[:before].set(kwargs.get("before_value", 0))
    return row.at[len(row) - after:].set(kwargs.get("after_value", 0))

  np.testing.assert_array_equal(
      jnp.pad(jnp.array([2, 3, 4]), 2, custom_pad, before_value=-10, after_value=10),
      [-10, -10, 2, 3, 4, 10, 10])
  got = jnp.pad(jnp.arange(6).reshape(2, 3), 1, custom_pad, before_value=-10, after_value=10)
  np.testing.assert_array_equal(got, [[-10, -10, -10, -10, 10], [-10, 0, 1, 2, 10],
                                      [-10, 3, 4, 5, 10], [-10, 10, 10, 10, 10]])


@pytest.mark.parametrize("mode", ["edge", "wrap", "reflect", "symmetric", "linear_ramp",
                                  "mean", "maximum", "median"])
def test_pad_under_vmap(rng, mode):
  x = rand(rng, (4, 3, 5), np.float32)
  got = xjax.vmap(lambda a: jnp.pad(a, ((1, 2), (7, 0)), mode=mode), in_axes=1)(x)
  want = np.stack([np.pad(x[:, i], ((1, 2), (7, 0)), mode=mode) for i in range(3)])
  np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("mode", ["edge", "wrap", "reflect", "symmetric", "mean", "maximum"])
def test_pad_gradient_counts_copies(mode):
  # d(sum(pad(x)))/dx is how many times each element appears (for copy modes), or its
  # share of the statistic.
  x = np.array([1.0, 4.0, 2.0, 3.0], np.float32)
  g = xjax.grad(lambda a: jnp.pad(a, (3, 6), mode=mode).sum())(x)
  eps = 1e-3
  fd = [(np.pad(x + eps * e, (3, 6), mode=mode).sum() - np.pad(x - eps * e, (3, 6), mode=mode)
         .sum()) / (2 * eps) for e in np.eye(4, dtype=np.float32)]
  np.testing.assert_allclose(g, fd, rtol=1e-2)


def test_pad_prints_like_jax():
  # Recorded from JAX 0.10.2.
  assert str(xjax.make_jaxpr(lambda x: jnp.pad(x, (1, 2), mode="edge"))(
      np.ones(3, np.float32))) == (
      "{ lambda ; a:f32[3]. let\n    b:f32[6] = jit[\n      name=_pad\n"
      "      jaxpr={ lambda ; a:f32[3] c:i32[]. let\n"
      "          d:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=(1,)] a\n"
      "          e:f32[1,1] = broadcast_in_dim[broadcast_dimensions=(0,)] d\n"
      "          f:f32[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] e\n"
      "          g:f32[1] = slice[limit_indices=(3,) start_indices=(2,) strides=(1,)] a\n"
      "          h:f32[1,2] = broadcast_in_dim[broadcast_dimensions=(0,)] g\n"
      "          i:f32[2] = reshape[dimensions=None new_sizes=(2,) sharding=None] h\n"
      "          b:f32[6] = concatenate[dimension=0] f a i\n"
      "        in (b,) }\n    ] a 0:i32[]\n  in (b,) }")


@pytest.mark.parametrize("call, error, text", [
    (lambda x: jnp.pad(x, 1, mode="bogus"), NotImplementedError,
     "Unimplemented padding mode 'bogus' for np.pad."),
    (lambda x: jnp.pad(x, 1, mode="edge", constant_values=1), ValueError,
     "unsupported keyword arguments for mode 'edge': {'constant_values'}"),
    (lambda x: jnp.pad(x, -1), ValueError, "index can't contain negative values"),
    (lambda x: jnp.pad(x, 1.5), TypeError, "`pad_width` must be of integral type."),
    (lambda x: jnp.pad(x, ((1, 2), (1, 2), (1, 2))), ValueError,
     r"jnp.pad: pad_width with nd=2 has unsupported shape \(3, 2\)"),
    (lambda x: jnp.pad(x, [1, (1, 2)]), TypeError, "`pad_width` entries must be the same shape"),
    (lambda x: jnp.pad(x, 1, mode="maximum", stat_length=0), ValueError,
     "stat_length of 0 yields no value for padding"),
    (lambda x: jnp.pad(x, 1, mode="reflect", reflect_type="sideways"), ValueError,
     "reflect_type must be 'even' or 'odd'"),
])
def test_pad_errors(call, error, text):
  with pytest.raises(error, match=text):
    call(np.ones((2, 3), np.float32))


def test_traced_pad_width_is_a_concretization_error():
  with pytest.raises(xjax.errors.ConcretizationTypeError, match="pad_width argument of jnp.pad"):
    xjax.jit(lambda x, w: jnp.pad(x, w))(np.ones(3, np.float32), 1)
