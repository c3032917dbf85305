"""Bad convolution arguments raise a clear error that names the argument, on every path.

A zero stride used to reach `padtype_to_pads`'s ``ceil(size / stride)`` for
'SAME' padding (and `_reshape_axis_out_of`'s divmod under vmap for a zero
batch_group_count) and raise ZeroDivisionError. Now the wrappers check each
integer argument before any shape arithmetic. The classes are JAX 0.10.2's:
JAX raises ValueError for strides (at lowering, "expects window to have
positive stride") and group counts, and TypeError ("All dilations must be
positive") for dilations, including conv_transpose's strides, which become
lhs dilations.
"""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
import xjax.scipy.signal as jss
from xjax import lax

X = np.ones((1, 2, 5, 5), np.float32)
W = np.ones((3, 2, 2, 2), np.float32)
NCHW = ("NCHW", "OIHW", "NCHW")
PADDINGS = ["SAME", "SAME_LOWER", "VALID", ((0, 0), (1, 1))]
BAD = [(0, 1), (1, -1)]


def _transforms(f):
  """`f` (of X) run eagerly and under each transformation that traces it."""
  return {
      "eager": lambda: f(X),
      "jit": lambda: xjax.jit(f)(X),
      "make_jaxpr": lambda: xjax.make_jaxpr(f)(X),
      "eval_shape": lambda: xjax.eval_shape(f, X),
      "vmap": lambda: xjax.vmap(f)(X[None]),
      "grad": lambda: xjax.grad(lambda x: f(x).sum())(X),
  }


def _raises(call, cls, *words):
  with pytest.raises(cls) as info:
    call()
  assert type(info.value) is cls  # not a subclass such as ZeroDivisionError's ArithmeticError
  for word in words:
    assert word in str(info.value), (word, str(info.value))


STRIDE_CALLS = {
    "conv": lambda s, p: lambda x: lax.conv(x, W, s, p),
    "conv_with_general_padding": lambda s, p: lambda x: lax.conv_with_general_padding(
        x, W, s, p, None, None),
    "conv_general_dilated": lambda s, p: lambda x: lax.conv_general_dilated(x, W, s, p),
    "conv_general_dilated_patches": lambda s, p: lambda x: lax.conv_general_dilated_patches(
        x, (2, 2), s, p),
}


@pytest.mark.parametrize("name", sorted(STRIDE_CALLS))
@pytest.mark.parametrize("padding", PADDINGS, ids=str)
@pytest.mark.parametrize("strides", BAD, ids=str)
@pytest.mark.parametrize("path", sorted(_transforms(None)))
def test_nonpositive_window_strides_raise_value_error(name, padding, strides, path):
  f = STRIDE_CALLS[name](strides, padding)
  _raises(_transforms(f)[path], ValueError, "window_strides", "positive", str(strides))


@pytest.mark.parametrize("which", ["lhs_dilation", "rhs_dilation"])
@pytest.mark.parametrize("dilation", BAD, ids=str)
@pytest.mark.parametrize("path", sorted(_transforms(None)))
def test_nonpositive_dilations_raise_type_error(which, dilation, path):
  padding = ((0, 0), (0, 0))  # string padding refuses any lhs dilation first
  f = lambda x: lax.conv_general_dilated(x, W, (1, 1), padding, **{which: dilation})
  _raises(_transforms(f)[path], TypeError, which, "All dilations must be positive")


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("dilation", BAD, ids=str)
def test_conv_with_general_padding_rhs_dilation(padding, dilation):
  _raises(lambda: lax.conv_with_general_padding(X, W, (1, 1), padding, None, dilation),
          TypeError, "rhs_dilation", "All dilations must be positive")


@pytest.mark.parametrize("which", ["strides", "rhs_dilation"])
@pytest.mark.parametrize("padding", PADDINGS, ids=str)
@pytest.mark.parametrize("value", BAD, ids=str)
@pytest.mark.parametrize("path", sorted(_transforms(None)))
def test_conv_transpose_nonpositive_strides_and_dilation(which, padding, value, path):
  strides = value if which == "strides" else (1, 1)
  dilation = value if which == "rhs_dilation" else None
  f = lambda x: lax.conv_transpose(x, W, strides, padding, rhs_dilation=dilation,
                                   dimension_numbers=NCHW)
  _raises(_transforms(f)[path], TypeError, f"conv_transpose {which}",
          "All dilations must be positive")


@pytest.mark.parametrize("use_consistent_padding", [False, True])
def test_conv_transpose_malformed_strides(use_consistent_padding):
  call = lambda s: lambda: lax.conv_transpose(
      X, W, s, ((0, 0), (0, 0)), dimension_numbers=NCHW,
      use_consistent_padding=use_consistent_padding)
  _raises(call((1,)), ValueError, "conv_transpose strides", "one entry per spatial dimension")
  _raises(call((1.5, 1)), TypeError, "conv_transpose strides", "integers")
  _raises(call(2), TypeError, "conv_transpose strides", "integers")


@pytest.mark.parametrize("which,lhs,rhs", [
    ("feature_group_count", X, np.ones((4, 1, 2, 2), np.float32)),
    ("batch_group_count", np.ones((4, 2, 5, 5), np.float32), np.ones((4, 2, 2, 2), np.float32)),
])
@pytest.mark.parametrize("count", [0, -1])
@pytest.mark.parametrize("padding", ["SAME", "VALID", ((0, 0), (0, 0))], ids=str)
@pytest.mark.parametrize("batched", ["lhs", "rhs", "both", "none"])
def test_nonpositive_group_counts_raise_value_error_under_vmap(which, lhs, rhs, count, padding,
                                                               batched):
  # vmap's rule reshapes by the group count: it must never see a bad one.
  f = lambda x, w: lax.conv_general_dilated(x, w, (1, 1), padding, **{which: count})
  in_axes = {"lhs": (0, None), "rhs": (None, 0), "both": (0, 0), "none": None}[batched]
  if in_axes is None:
    call = lambda: f(lhs, rhs)
  else:
    args = [np.stack([a, a]) if ax == 0 else a for a, ax in zip((lhs, rhs), in_axes)]
    call = lambda: xjax.vmap(f, in_axes=in_axes)(*args)
  _raises(call, ValueError, which, "positive", str(count))


@pytest.mark.parametrize("path", sorted(_transforms(None)))
def test_nonpositive_group_count_on_every_path(path):
  f = lambda x: lax.conv_general_dilated(x, np.ones((4, 1, 2, 2), np.float32), (1, 1), "SAME",
                                         feature_group_count=0)
  _raises(_transforms(f)[path], ValueError, "feature_group_count", "positive")


@pytest.mark.parametrize("which", ["feature_group_count", "batch_group_count"])
def test_non_integer_group_count_raises_type_error_naming_it(which):
  _raises(lambda: lax.conv_general_dilated(X, W, (1, 1), "SAME", **{which: 2.0}), TypeError,
          which, "integer")


@pytest.mark.parametrize("which,value,cls,words", [
    ("window_strides", (1,), ValueError, ("window_strides", "same number of dimensions")),
    ("window_strides", (1, 1, 1), ValueError, ("window_strides", "same number of dimensions")),
    ("window_strides", (1.5, 1), TypeError, ("window_strides", "integers")),
    ("window_strides", 1, TypeError, ("window_strides", "integers")),
    ("rhs_dilation", (1,), ValueError, ("rhs_dilation", "one entry per spatial dimension")),
    ("rhs_dilation", (1.5, 1), TypeError, ("rhs_dilation", "integers")),
    ("lhs_dilation", 2, TypeError, ("lhs_dilation", "integers")),
])
@pytest.mark.parametrize("padding", ["SAME", "VALID", ((0, 0), (0, 0))], ids=str)
def test_malformed_window_params_name_the_argument(which, value, cls, words, padding):
  kwargs = {"window_strides": (1, 1), which: value}
  _raises(lambda: lax.conv_general_dilated(X, W, padding=padding, **kwargs), cls, *words)


@pytest.mark.parametrize("padding,cls,words", [
    (((1,), (1,)), ValueError, ("padding",)),
    ((1, 1), ValueError, ("padding",)),
    (3, ValueError, ("padding",)),
    (((1.5, 0), (0, 0)), ValueError, ("padding",)),
    (((0, 0),), TypeError, ("pads", "expected 2, got 1")),
    (((-9, 0), (0, 0)), ValueError, ("Negative padding",)),
    ("FOO", RuntimeError, ("padding type", "FOO")),
], ids=str)
@pytest.mark.parametrize("jitted", [False, True])
def test_bad_padding(padding, cls, words, jitted):
  f = lambda x: lax.conv_general_dilated(x, W, (1, 1), padding)
  _raises(lambda: (xjax.jit(f) if jitted else f)(X), cls, *words)


def test_zero_size_window_is_refused_at_lowering_not_by_the_compiler():
  # JAX: eval_shape succeeds; compiling fails with a ValueError from the verifier.
  w = np.ones((3, 2, 0, 2), np.float32)
  f = lambda x: lax.conv_general_dilated(x, w, (1, 1), "VALID")
  assert xjax.eval_shape(f, X).shape == (1, 3, 6, 4)
  _raises(lambda: f(X), ValueError, "window", "(0, 2)")
  _raises(lambda: xjax.jit(f)(X), ValueError, "window", "(0, 2)")
  _raises(lambda: lax.conv_general_dilated_patches(X, (0, 2), (1, 1), "SAME"), ValueError,
          "window", "(0, 2)")


def test_patches_filter_shape_checked():
  _raises(lambda: lax.conv_general_dilated_patches(X, (1.5, 2), (1, 1), "SAME"), TypeError,
          "filter_shape", "integers")
  _raises(lambda: lax.conv_general_dilated_patches(X, (-1, 2), (1, 1), "SAME"), TypeError,
          "filter_shape", "non-negative")


def test_conv_general_dilated_local_zero_stride():
  rhs = np.ones((4, 8, 1, 5), np.float32)
  _raises(lambda: lax.conv_general_dilated_local(X, rhs, (0, 1), "VALID", (2, 2)), ValueError,
          "window_strides", "positive")


@pytest.mark.parametrize("padding", ["SAME", "VALID", ((0, 0), (0, 0))], ids=str)
def test_shape_helpers_refuse_nonpositive_strides(padding):
  _raises(lambda: lax.conv_shape_tuple((1, 2, 5, 5), (3, 2, 2, 2), (0, 1), padding), ValueError,
          "strides", "(0, 1)")
  _raises(lambda: lax.conv_general_shape_tuple((1, 2, 5, 5), (3, 2, 2, 2), (0, 1), padding,
                                               NCHW), ValueError, "strides", "(0, 1)")


def test_good_arguments_still_work_and_match_numpy():
  # The checks must not refuse valid calls: a strided, dilated conv against a direct sum.
  rng = np.random.default_rng(0)
  x = rng.standard_normal((1, 1, 7, 7)).astype(np.float32)
  w = rng.standard_normal((1, 1, 2, 2)).astype(np.float32)
  out = np.asarray(lax.conv_general_dilated(x, w, (2, 1), "VALID", rhs_dilation=(1, 2)))
  want = np.zeros((1, 1, 3, 5), np.float32)
  for i in range(3):
    for j in range(5):
      want[0, 0, i, j] = sum(x[0, 0, 2 * i + a, j + 2 * b] * w[0, 0, a, b]
                             for a in range(2) for b in range(2))
  np.testing.assert_allclose(out, want, rtol=1e-5)
  assert lax.conv_shape_tuple((1, 2, 5, 5), (3, 2, 2, 2), (2, 1), "SAME") == (1, 3, 3, 5)


@pytest.mark.parametrize("fn", [jnp.convolve, jnp.correlate, jss.convolve, jss.correlate])
def test_convolve_wrappers_bad_inputs(fn):
  a, k = jnp.ones(5), jnp.ones(3)
  _raises(lambda: fn(a, k, mode="foo"), ValueError, "mode")
  _raises(lambda: fn(a, jnp.ones(0)), ValueError, "(0,)")
  _raises(lambda: xjax.jit(lambda a: fn(a, jnp.ones(0)))(a), ValueError, "(0,)")
