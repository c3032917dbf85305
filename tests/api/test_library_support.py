"""Public JAX names that libraries built on JAX (flax) rely on, checked on their own:
`jax.experimental.layout`, `jax.experimental.hijax`'s value classes, typed keys as
`jax.Array`s, `traceback_util.register_exclusion`, `dtypes.supports_inf`, and jit's
handling of sharding trees made only of None."""
import ml_dtypes
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src import dtypes
from xjax._src import traceback_util
from xjax._src.effects import Effect
from xjax.experimental import hijax
from xjax.experimental.layout import Format, Layout
from xjax.sharding import SingleDeviceSharding


def test_layout_equality_hash_and_update():
  a = Layout((0, 1))
  assert a == Layout([0, 1]) and hash(a) == hash(Layout((0, 1)))
  assert a != Layout((1, 0)) and a != (0, 1)
  b = a.update(major_to_minor=(1, 0))
  assert b.major_to_minor == (1, 0) and a.major_to_minor == (0, 1)
  assert repr(a) == "Layout(major_to_minor=(0, 1), tiling=None, sub_byte_element_size_in_bits=0)"
  assert repr(Layout.AUTO) == "AUTO"
  with pytest.raises(TypeError, match="unexpected keyword"):
    a.update(order=(1, 0))


def test_layout_check_compatible_aval_names_the_rank_mismatch():
  Layout((1, 0)).check_compatible_aval((2, 3))
  with pytest.raises(ValueError, match="major_to_minor=\\(0,\\) and shape=\\(2, 3\\)"):
    Layout((0,)).check_compatible_aval((2, 3))


def test_format_validates_its_arguments():
  s = SingleDeviceSharding(xjax.devices()[0])
  f = Format(Layout((0,)), s)
  assert f == Format(Layout((0,)), s) and hash(f) == hash(Format(Layout((0,)), s))
  assert Format() == Format(None, None) and Format(Layout.AUTO).layout is Layout.AUTO
  with pytest.raises(ValueError, match="Sharding has to be concrete"):
    Format(Layout((0,)))
  with pytest.raises(TypeError, match="layout argument"):
    Format("row-major")
  with pytest.raises(TypeError, match="sharding argument"):
    Format(None, "cpu")


def test_typed_keys_are_arrays_with_key_avals():
  keys = xjax.random.split(xjax.random.key(0), 3)
  assert isinstance(keys, xjax.Array) and isinstance(keys[0], jnp.ndarray)
  assert issubclass(type(keys), xjax.Array)
  assert str(xjax.typeof(keys)) == "key<fry>[3]" and str(xjax.typeof(keys[0])) == "key<fry>[]"
  assert jnp.asarray(keys) is keys
  assert not isinstance(np.zeros(2), xjax.Array)


def test_register_exclusion_filters_frames_of_that_path(tmp_path):
  path = str(tmp_path) + "/"
  assert not traceback_util.is_internal(path + "lib.py")
  traceback_util.register_exclusion(path)
  try:
    assert traceback_util.is_internal(path + "lib.py")
    assert not traceback_util.is_internal(str(tmp_path.parent) + "/user.py")
  finally:
    traceback_util._exclude_paths.remove(path)


@pytest.mark.parametrize("dtype,expected", [
    (np.float32, True), (np.float16, True), (ml_dtypes.bfloat16, True), (np.complex64, True),
    (ml_dtypes.float8_e5m2, True), (ml_dtypes.float8_e4m3fn, False),
    (ml_dtypes.float8_e4m3fnuz, False), (ml_dtypes.float8_e5m2fnuz, False),
    (ml_dtypes.float8_e4m3b11fnuz, False), (np.int32, False), (np.bool_, False)])
def test_supports_inf(dtype, expected):
  assert dtypes.supports_inf(dtype) is expected
  if expected and np.dtype(dtype).kind == "f":
    assert np.isinf(np.array(np.inf, dtype))


def test_jit_with_sharding_trees_of_none_runs_unsharded():
  f = xjax.jit(lambda x, y: (x + y, x * y), in_shardings=(None, None),
               out_shardings=(None, None))
  a, b = f(jnp.arange(3.), 2.)
  np.testing.assert_array_equal(a, [2., 3., 4.])
  np.testing.assert_array_equal(b, [0., 2., 4.])


def test_hijax_value_classes():
  assert isinstance(xjax.typeof(jnp.ones(2)), hijax.AbstractValue)
  m = hijax.aval_method(len)
  p = hijax.aval_property(fget=len)
  assert m.fun is len and p.fget is len
  q = hijax.AvalQDD("aval", "qdd")
  assert (q.aval, q.qdd) == ("aval", "qdd") and q == hijax.AvalQDD("aval", "qdd")

  class MyEffect(Effect):
    pass

  hijax.control_flow_allowed_effects.add_type(MyEffect)
  assert hijax.control_flow_allowed_effects.contains(MyEffect())
  assert hijax.control_flow_allowed_effects.filter_not_in([MyEffect()]) == []


def test_hijax_primitives_can_be_defined_but_not_bound():
  class Double(hijax.HiPrimitive):
    def abstract_eval(self, x):
      return x, set()

    def to_lojax(self, x):
      return x * 2

  double_p = Double("double")
  assert double_p.name == "double" and double_p.multiple_results
  assert double_p.abstract_eval("aval") == ("aval", set())  # the subclass's method
  with pytest.raises(NotImplementedError, match="hijax primitive 'double'"):
    double_p.bind(jnp.ones(2))


@pytest.mark.slow
def test_parse_flags_with_absl_reads_jax_flags_from_argv():
  import subprocess
  import sys
  code = ("import sys, xjax; xjax.config.parse_flags_with_absl(); "
          "print(xjax.config.jax_enable_x64, xjax.config.jax_debug_nans, "
          "xjax.config.jax_default_matmul_precision); "
          "xjax.config.update('jax_enable_x64', False); xjax.config.parse_flags_with_absl(); "
          "print(xjax.config.jax_enable_x64)")
  proc = subprocess.run([sys.executable, "-c", code, "--jax_enable_x64=true", "--nojax_debug_nans",
                         "--jax_default_matmul_precision=highest", "--unrelated", "-k", "x"],
                        capture_output=True, text=True, timeout=120)
  assert proc.returncode == 0, proc.stderr
  assert proc.stdout.split() == ["True", "False", "highest", "False"]  # read once only


def test_prefix_errors_names_the_mismatch():
  from xjax._src.tree_util import prefix_errors
  assert prefix_errors({"a": 1}, {"a": [2, 3]}) == []
  assert prefix_errors(1, {"a": 2}) == []
  (error,) = prefix_errors({"a": [1]}, {"a": (1,)})
  e = error("in_axes")
  assert isinstance(e, ValueError) and "in_axes['a']" in str(e)


def test_eval_shape_gives_key_arrays_as_shape_dtype_structs():
  k = xjax.random.key(0)
  out = xjax.eval_shape(lambda k: (k, xjax.random.split(k), jnp.ones(2)), k)
  assert out == (xjax.ShapeDtypeStruct((), k.dtype), xjax.ShapeDtypeStruct((2,), k.dtype),
                 xjax.ShapeDtypeStruct((2,), jnp.float32))
  assert type(out[0]) is xjax.ShapeDtypeStruct


def test_mesh_are_all_axes_of_one_type():
  from xjax.sharding import AbstractMesh, AxisType
  explicit = AbstractMesh((2, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
  mixed = AbstractMesh((2, 2), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Auto))
  assert explicit.are_all_axes_explicit and not explicit.are_all_axes_auto
  assert not mixed.are_all_axes_explicit and not mixed.are_all_axes_auto
  assert not mixed.are_all_axes_manual
  assert not AbstractMesh((), ()).are_all_axes_auto  # no axes: False, as in JAX


def test_einsum_calls_the_given_dot_general_for_each_contraction():
  calls = []

  def dot_general(*args, **kwargs):
    calls.append(sorted(kwargs))
    return xjax.lax.dot_general(*args, **kwargs)

  a, b, c = jnp.arange(6.).reshape(2, 3), jnp.arange(12.).reshape(3, 4), jnp.ones((4, 2))
  out = jnp.einsum("ij,jk,kl->il", a, b, c, _dot_general=dot_general)
  np.testing.assert_allclose(out, np.asarray(a) @ np.asarray(b) @ np.asarray(c))
  assert calls == [["preferred_element_type"]] * 2
