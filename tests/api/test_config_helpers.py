"""Config context managers and small top-level helpers (issue 16, item 6).

Messages are goldens from real JAX 0.10.2 (run in .venv-jax), pasted as literals.
"""
import logging
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src import api
from xjax._src import config as cfg
from xjax._src.config import config

_GUARD_MSG = ("INVALID_ARGUMENT: Disallowed host-to-device transfer: aval=ShapedArray(float32[3]), "
              "dst_sharding=SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)")


# -- State objects -------------------------------------------------------------


def test_state_value_name_and_doc():
  assert cfg.enable_x64.value is False
  assert cfg.enable_x64.name == "jax_enable_x64"
  assert cfg.enable_x64.__name__ == "enable_x64"
  assert cfg.enable_x64.__doc__.startswith("Context manager for `jax_enable_x64` config option.")


def test_state_bool_raises_jax_message():
  with pytest.raises(TypeError, match=r"^bool\(\) not supported for instances of type 'State' "
                     r"\(did you mean to use 'State.value' instead\?\)$"):
    bool(cfg.enable_x64)


@pytest.mark.parametrize("state", [cfg.default_device, cfg.transfer_guard_host_to_device,
                                   cfg.default_matmul_precision])
def test_state_without_default_requires_argument(state):
  with pytest.raises(TypeError, match=f"^Context manager for {state.__name__} config option "
                     "requires an argument representing the new value for the config option.$"):
    state()


def test_enable_x64_context_manager_and_decorator():
  with cfg.enable_x64():
    assert jnp.ones(2).dtype == np.float64
    with cfg.enable_x64(False):
      assert jnp.ones(2).dtype == np.float32
    assert config.jax_enable_x64 is True
    assert xjax.config.x64_enabled is True  # JAX's property for FLAGS.x64_enabled users
  assert jnp.ones(2).dtype == np.float32
  assert xjax.config.x64_enabled is False

  @cfg.enable_x64(True)
  def f():
    return jnp.ones(2).dtype
  assert f() == np.float64
  assert config.jax_enable_x64 is False


def test_config_read_returns_flags_without_context_managers_only():
  assert config.read("jax_enable_x64") is False
  with cfg.enable_x64():
    assert config.read("jax_enable_x64") is True
  # JAX 0.10.2's messages:
  with pytest.raises(AttributeError, match="For flags with a corresponding contextmanager, "
                     r"read their value via e.g. `config.jax_debug_nans` rather than"):
    config.read("jax_debug_nans")
  with pytest.raises(AttributeError, match="Unrecognized config option: jax_no_such_flag"):
    config.read("jax_no_such_flag")


def test_enable_custom_prng_is_a_bool_state_and_decorator():
  assert xjax.enable_custom_prng.value is False

  @xjax.enable_custom_prng()
  def f():
    return config.jax_enable_custom_prng
  assert f() is True and config.jax_enable_custom_prng is False


def test_context_manager_restores_on_exception():
  with pytest.raises(RuntimeError):
    with cfg.debug_nans(True), cfg.log_compiles(True):
      assert config.jax_debug_nans and config.jax_log_compiles
      raise RuntimeError("boom")
  assert not config.jax_debug_nans and not config.jax_log_compiles


def test_same_manager_object_reentrant():
  cm = cfg.enable_x64(True)
  with cm:
    with cm:
      assert config.jax_enable_x64
    assert config.jax_enable_x64
  assert not config.jax_enable_x64


def test_context_managers_are_thread_local():
  seen = {}
  entered, release = threading.Event(), threading.Event()

  def other():
    entered.wait()
    seen["x64"] = config.jax_enable_x64
    seen["leaks"] = config.jax_check_tracer_leaks
    seen["guard"] = cfg.transfer_guard_level("host_to_device")
    release.set()

  t = threading.Thread(target=other)
  t.start()
  with cfg.enable_x64(), cfg.checking_leaks(), cfg.transfer_guard("disallow"):
    entered.set()
    release.wait()
  t.join()
  assert seen == {"x64": False, "leaks": False, "guard": "allow"}


def test_debug_nans_and_infs_set_flags():
  with cfg.debug_nans():
    assert config.jax_debug_nans
  with cfg.debug_infs(True):
    assert config.jax_debug_infs
  assert not config.jax_debug_nans and not config.jax_debug_infs


def test_enum_state_rejects_bad_value_with_jax_message():
  with pytest.raises(ValueError, match=r"^new enum value must be None or in \['allow', 'log', "
                     r"'disallow', 'log_explicit', 'disallow_explicit'\], got bogus of type "
                     r"<class 'str'>.$"):
    with cfg.transfer_guard("bogus"):
      pass


def test_default_matmul_precision_and_device():
  with cfg.default_matmul_precision("highest"):
    assert config.jax_default_matmul_precision == "highest"
  dev = xjax.devices()[0]
  with cfg.default_device(dev):
    assert jnp.ones(2).device == dev
  assert config.jax_default_matmul_precision is None


def test_checking_leaks_is_partial_true():
  with cfg.checking_leaks():
    assert config.jax_check_tracer_leaks
  with cfg.check_tracer_leaks(True):
    assert config.jax_check_tracer_leaks
  assert not config.jax_check_tracer_leaks


@pytest.mark.slow
@pytest.mark.parametrize("env,flag,expected", [
    ("JAX_CHECK_TRACER_LEAKS", "jax_check_tracer_leaks", "True"),
    ("JAX_LOG_COMPILES", "jax_log_compiles", "True"),
    ("JAX_EXPLAIN_CACHE_MISSES", "jax_explain_cache_misses", "True"),
    ("JAX_DEBUG_KEY_REUSE", "jax_debug_key_reuse", "True"),
    ("JAX_TRANSFER_GUARD", "jax_transfer_guard", "disallow"),
])
def test_env_variable_forms(env, flag, expected):
  value = "disallow" if expected == "disallow" else "1"
  out = subprocess.run(
      [sys.executable, "-c", f"from xjax._src.config import config; print(config.{flag})"],
      env={**os.environ, env: value}, capture_output=True, text=True, check=True)
  assert out.stdout.strip() == expected


# -- tracer leaks --------------------------------------------------------------

_leaked = []


def _leaky(x):
  y = x * 2
  _leaked.append(y)
  return x + 1


def test_checking_leaks_reports_leaked_tracer_and_line():
  _leaked.clear()
  with cfg.checking_leaks():
    with pytest.raises(Exception) as info:
      xjax.jit(_leaky)(1.)
  _leaked.clear()
  msg = str(info.value)
  assert type(info.value) is Exception  # as JAX
  assert msg.startswith("Leaked trace DynamicJaxprTrace. Leaked tracer(s):\n\nJitTracer(~float32[])\n"
                        "The error occurred while tracing the function _leaky at ")
  assert "was created on line:\n  " in msg and "test_config_helpers.py" in msg and "(_leaky)" in msg
  assert f"is referred to by {__name__}._leaked" in msg


def test_checking_leaks_quiet_without_leak_and_off_by_default():
  with cfg.checking_leaks():
    assert float(xjax.jit(lambda x: jnp.sin(x) * jnp.ones(3) + 2)(1.)[0]) == pytest.approx(
        np.sin(1.) + 2)
  _leaked.clear()
  xjax.make_jaxpr(_leaky)(2.)  # leak checking off: no error
  _leaked.clear()


# -- transfer guard ------------------------------------------------------------


def test_transfer_guard_disallow_implicit_only():
  with cfg.transfer_guard("disallow"):
    with pytest.raises(Exception) as info:
      jnp.add(np.ones(3, np.float32), 1)
    assert str(info.value) == _GUARD_MSG
    assert type(info.value).__name__ == "JaxRuntimeError"
    xjax.device_put(np.ones(3, np.float32))  # explicit: allowed
    np.asarray(jnp.ones(3))  # device-to-host on CPU is not guarded, as in JAX


def test_transfer_guard_disallow_explicit_blocks_device_put():
  with cfg.transfer_guard_host_to_device("disallow_explicit"):
    with pytest.raises(Exception, match="Disallowed host-to-device transfer"):
      xjax.device_put(np.ones(3, np.float32))
  xjax.device_put(np.ones(3, np.float32))


def test_transfer_guard_log(caplog):
  with caplog.at_level(logging.WARNING), cfg.transfer_guard("log"):
    xjax.jit(lambda a: a)(np.ones((2, 2), np.float32))
  assert ("host-to-device transfer: aval=ShapedArray(float32[2,2]), dst_sharding="
          "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)") in caplog.text


# -- logging -----------------------------------------------------------------------


def test_log_compiles_message(caplog):
  def f(x):
    return x * 2
  with caplog.at_level(logging.WARNING), cfg.log_compiles(True):
    xjax.jit(f)(jnp.ones(3))
  assert ("Compiling jit(f) with global shapes and types (ShapedArray(float32[3]),). "
          "Argument mapping: (UnspecifiedValue,).") in caplog.messages


def test_explain_cache_misses_messages(caplog):
  def g(x, y):
    return x + y
  jg = xjax.jit(g)
  with caplog.at_level(logging.WARNING), cfg.explain_cache_misses(True):
    jg(1., 2.)
    jg(jnp.ones(3), 2.)
    jg(np.ones(3, np.int32), 2.)
  misses = [m for m in caplog.messages if m.startswith("TRACING CACHE MISS")]
  assert len(misses) == 3
  assert misses[0].endswith(f"  never seen function:\n    g id={id(g)} defined at {__file__}:"
                            f"{g.__code__.co_firstlineno}")
  assert misses[1].endswith(
      "  all previously seen cache keys differ. For the closest previous key:\n"
      "  different input types:\n"
      "  * at x, now f32[3]({}){weak_type=False} and before f32[]({}){weak_type=True}"
      "https://docs.jax.dev/en/latest/type_promotion.html#weak-types")
  assert misses[2].endswith("  different input types:\n  * at x, now i32[3] and before f32[3]")


# -- helpers -------------------------------------------------------------------------


def test_typeof():
  assert repr(api.typeof(1.0)) == "ShapedArray(float32[], weak_type=True)"
  assert repr(api.typeof(np.int8(1))) == "ShapedArray(int8[])"
  assert str(api.typeof(jnp.ones(3))) == "float32[3]"
  with pytest.raises(TypeError, match="^Argument 'a' of type <class 'str'> is not a valid JAX type$"):
    api.typeof("a")


def test_named_scope_and_named_call():
  with pytest.raises(TypeError, match="^named_scope name argument must be a string.$"):
    with api.named_scope(1):
      pass

  def g(x):
    with api.named_scope("s"):
      assert api.current_name_stack() == "s"
      return x * 2
  assert str(xjax.make_jaxpr(g)(1.)) == "{ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }"
  f = api.named_call(lambda x: x * 2, name="dbl")
  assert str(xjax.make_jaxpr(f)(1.)) == "{ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }"
  assert api.current_name_stack() == ""


def test_ensure_compile_time_eval():
  def h(x):
    with api.ensure_compile_time_eval():
      y = jnp.sin(3.)
      assert isinstance(y, xjax.Array)
    return x * y
  # Golden from JAX: the sine is a constant of the jaxpr.
  assert str(xjax.make_jaxpr(h)(1.)) == "{ lambda a:f32[]; b:f32[]. let c:f32[] = mul b a in (c,) }"
  assert float(xjax.jit(h)(2.)) == pytest.approx(2 * np.sin(3.), rel=1e-6)


def test_clear_caches_retraces():
  count = []

  def f(x):
    count.append(1)
    return x + 1
  jf = xjax.jit(f)
  jf(1.)
  jf(1.)
  assert len(count) == 1
  api.clear_caches()
  jf(1.)
  assert len(count) == 2


def test_live_arrays_and_environment_info():
  x = jnp.arange(5)
  assert any(a is x for a in xjax.live_arrays())
  x.delete()
  assert not any(a is x for a in xjax.live_arrays())
  info = api.print_environment_info(return_string=True)
  lines = info.splitlines()
  assert lines[0].startswith("jax:    ") and lines[2] == f"numpy:  {np.__version__}"
  assert lines[4] == 'device info: cpu-1, 1 local devices"' or lines[4].startswith("device info: cpu-")


def test_shape_dtype_struct_complete():
  s = xjax.ShapeDtypeStruct((2, 3), jnp.float32)
  assert repr(s) == str(s) == "ShapeDtypeStruct(shape=(2, 3), dtype=float32)"
  assert repr(xjax.ShapeDtypeStruct((2,), np.int32, weak_type=True)) == \
      "ShapeDtypeStruct(shape=(2,), dtype=int32, weak_type=True)"
  assert repr(xjax.ShapeDtypeStruct([2], np.float64)) == "ShapeDtypeStruct(shape=(2,), dtype=float64)"
  sh = xjax._src.array.SingleDeviceSharding(xjax.devices()[0])
  s2 = xjax.ShapeDtypeStruct((2,), jnp.float32, sharding=sh)
  assert repr(s2).startswith("ShapeDtypeStruct(shape=(2,), dtype=float32, sharding=SingleDeviceSharding(")
  assert s2.sharding is sh and s2 != xjax.ShapeDtypeStruct((2,), jnp.float32)
  assert repr(s.update(shape=(4,))) == "ShapeDtypeStruct(shape=(4,), dtype=float32)"
  assert repr(s.update(dtype=jnp.int32, weak_type=True)) == \
      "ShapeDtypeStruct(shape=(2, 3), dtype=int32, weak_type=True)"
  same = xjax.ShapeDtypeStruct((2, 3), "float32")
  assert s == same and hash(s) == hash(same) and s != 1
  assert (s.ndim, s.size, len(xjax.ShapeDtypeStruct((5, 2), "f"))) == (2, 6, 5)
  with pytest.raises(TypeError, match="^len\\(\\) of unsized object$"):
    len(xjax.ShapeDtypeStruct((), "f"))
  with pytest.raises(ValueError, match="^ShapeDtypeStruct: dtype must be specified.$"):
    xjax.ShapeDtypeStruct((2,), None)
  assert xjax.eval_shape(lambda x: x * 2, s) == s


def test_allow_f16_reductions():
  x = xjax.numpy.ones(3, xjax.numpy.bfloat16)
  with xjax.allow_f16_reductions(False):
    # jnp.sum accumulates half floats in float32, as in JAX: allowed.
    assert float(xjax.numpy.sum(xjax.numpy.ones(3, xjax.numpy.float16))) == 3.0
    with pytest.raises(ValueError, match=r"reduce_sum on operand bf16\[3\] is not allowed when "
                                         r"jax_allow_f16_reductions=False."):
      xjax.lax.reduce_sum_p.bind(x, axes=(0,), out_sharding=None)
    # Reducing only size-1 axes is allowed.
    xjax.lax.reduce_sum_p.bind(x.reshape(3, 1), axes=(1,), out_sharding=None)
  assert float(xjax.lax.reduce_sum_p.bind(x, axes=(0,), out_sharding=None)) == 3.0


@pytest.mark.parametrize("transform", ["vmap", "jvp", "grad"])
def test_checking_leaks_under_vmap_and_autodiff(transform):
  saved = []

  def leaky(x):
    saved.append(x)
    return x * 2

  run = {"vmap": lambda: xjax.vmap(leaky)(jnp.arange(3.0)),
         "jvp": lambda: xjax.jvp(leaky, (1.0,), (1.0,)),
         "grad": lambda: xjax.grad(leaky)(1.0)}[transform]
  with xjax.checking_leaks():
    with pytest.raises(Exception, match="Leaked trace"):
      run()
    saved.clear()
    # Without the leak nothing is raised.
    run_clean = {"vmap": lambda: xjax.vmap(lambda x: x * 2)(jnp.arange(3.0)),
                 "jvp": lambda: xjax.jvp(lambda x: x * 2, (1.0,), (1.0,)),
                 "grad": lambda: xjax.grad(lambda x: x * 2)(1.0)}[transform]
    run_clean()


def test_explain_cache_misses_names_the_flags_and_weak_types(caplog):
  jf = xjax.jit(lambda x, y: x + y)
  y = jnp.arange(4, dtype="float32")
  with caplog.at_level(logging.WARNING), cfg.explain_cache_misses(True):
    jf(jnp.float32(0.), y)
    jf(0., y)
    with xjax.numpy_rank_promotion("warn"):
      jf(0., y)
  misses = [m for m in caplog.messages if m.startswith("TRACING CACHE MISS")]
  assert "at x, now f32[]{weak_type=True} and before f32[]{weak_type=False}" in misses[1]
  assert "  * jax_numpy_rank_promotion differs: now warn and before allow" in misses[2]
