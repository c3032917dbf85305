"""JAX's support modules (issue 22): `xjax.monitoring` (listeners receive JAX's events
during compilation), `xjax.stages` (the AOT stage types), `xjax.api_util` (helpers over
`WrappedFun`s), `xjax.tree_util`'s `KeyPath`/`KeyEntry`/`default_registry`,
`xjax.errors.JaxRuntimeError`, and top-level names (`copy_to_host_async`, `host_count`).
"""
import dataclasses

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import api_util
from xjax import monitoring
from xjax import stages
from xjax import tree_util
from xjax._src import linear_util as lu
from xjax._src import monitoring as monitoring_impl
from xjax._src.config import config
from xjax.experimental.compilation_cache import compilation_cache as cc

TRACE = "/jax/core/compile/jaxpr_trace_duration"
LOWER = "/jax/core/compile/jaxpr_to_mlir_module_duration"
COMPILE = "/jax/core/compile/backend_compile_duration"


class _Recorder:
  """Registers one listener of each kind; `log` gets (kind, event, value(s), kwargs)."""

  def __init__(self):
    self.log = []
    self.event = lambda e, **kw: self.log.append(("event", e, None, kw))
    self.duration = lambda e, d, **kw: self.log.append(("duration", e, d, kw))
    self.span = lambda e, s, t, **kw: self.log.append(("span", e, (s, t), kw))
    self.scalar = lambda e, v, **kw: self.log.append(("scalar", e, v, kw))

  def __enter__(self):
    monitoring.register_event_listener(self.event)
    monitoring.register_event_duration_secs_listener(self.duration)
    monitoring.register_event_time_span_listener(self.span)
    monitoring.register_scalar_listener(self.scalar)
    return self

  def __exit__(self, *exc):
    monitoring.unregister_event_listener(self.event)
    monitoring.unregister_event_duration_listener(self.duration)
    monitoring.unregister_event_time_span_listener(self.span)
    monitoring.unregister_scalar_listener(self.scalar)

  def named(self, kind):
    return [(e, kw.get("fun_name")) for k, e, _, kw in self.log if k == kind]


# ---------------------------------------------------------------------------- monitoring


def test_record_event_calls_listeners_with_metadata():
  seen = []
  listener = lambda event, **kw: seen.append((event, kw))
  monitoring.register_event_listener(listener)
  try:
    monitoring.record_event("/test/a", step=3, name="x")
  finally:
    monitoring.unregister_event_listener(listener)
  monitoring.record_event("/test/b")
  assert seen == [("/test/a", {"step": 3, "name": "x"})]


def test_record_duration_span_and_scalar_reach_their_own_listeners_only():
  with _Recorder() as rec:
    monitoring.record_event_duration_secs("/test/d", 0.25, k=1)
    monitoring.record_event_time_span("/test/s", 1.0, 3.5)
    monitoring.record_scalar("/test/v", 7)
  assert rec.log == [("duration", "/test/d", 0.25, {"k": 1}),
                     ("span", "/test/s", (1.0, 3.5), {}),
                     ("scalar", "/test/v", 7, {})]


def test_unregister_unknown_listener_raises_and_register_checks_callable():
  with pytest.raises(AssertionError, match="not registered"):
    monitoring.unregister_event_listener(lambda e: None)
  with pytest.raises(TypeError, match="callback must be callable"):
    monitoring.register_scalar_listener(3)


def test_get_and_clear_event_listeners():
  getters = (monitoring_impl.get_event_listeners, monitoring_impl.get_event_duration_listeners,
             monitoring_impl.get_event_time_span_listeners, monitoring_impl.get_scalar_listeners)
  registers = (monitoring.register_event_listener,
               monitoring.register_event_duration_secs_listener,
               monitoring.register_event_time_span_listener, monitoring.register_scalar_listener)
  saved = [get() for get in getters]
  seen = []
  listener = lambda event, *values, **kw: seen.append(event)
  for register in registers:
    register(listener)
  try:
    assert all(get()[-1] is listener for get in getters)
    monitoring.clear_event_listeners()
    assert all(get() == [] for get in getters)  # JAX 0.10.2 keeps the scalar ones: a bug
    monitoring.record_event("/test/e")
    monitoring.record_scalar("/test/v", 1.0)
    assert seen == []
  finally:
    monitoring.clear_event_listeners()
    for register, listeners in zip(registers, saved, strict=True):
      for callback in listeners:
        register(callback)


def _all_listeners():
  return (monitoring_impl.get_event_listeners()
          + monitoring_impl.get_event_duration_listeners()
          + monitoring_impl.get_event_time_span_listeners()
          + monitoring_impl.get_scalar_listeners())


def test_jit_compile_records_trace_lower_compile_events_in_order():
  def monitored_fn(x):
    return jnp.sin(x) * 2.0 + 1.0

  f = xjax.jit(monitored_fn)
  f(jnp.arange(3.0))
  y = jnp.ones((2, 5))  # made before the block: its own eager ops compile here
  with _Recorder() as rec:
    f(y)  # a new signature
  assert rec.named("duration") == [(TRACE, "monitored_fn"), (LOWER, "jit(monitored_fn)"),
                                   (COMPILE, "jit(monitored_fn)")]
  assert rec.named("scalar") == rec.named("duration") == rec.named("span")
  for kind, _, value, _ in rec.log:
    if kind == "duration":
      assert 0.0 <= value < 60.0
    if kind == "span":
      assert value[0] <= value[1]
  # The scalar is the start time: the span's start.
  scalars = [v for k, _, v, _ in rec.log if k == "scalar"]
  starts = [v[0] for k, _, v, _ in rec.log if k == "span"]
  assert scalars == starts


def test_cached_jit_call_records_nothing():
  f = xjax.jit(lambda x: x * 3.0)
  x, z = jnp.ones(4), jnp.zeros(4)
  f(x)
  with _Recorder() as rec:
    f(x)
    f(z)
  assert rec.log == []


def test_eager_op_compile_is_named_as_jax_names_it():
  x = jnp.ones((3, 7))
  with _Recorder() as rec:
    jnp.cosh(x)
  assert (COMPILE, "jit(cosh)") in rec.named("duration")
  assert (TRACE, "cosh") in rec.named("duration")


def test_lower_and_compile_record_their_own_stages():
  def staged(x):
    return x @ x.T

  lowered = xjax.jit(staged).lower(jnp.ones((3, 2)))
  with _Recorder() as rec:
    lowered.compile()
  assert rec.named("duration") == [(COMPILE, "jit(staged)")]
  traced = xjax.jit(staged).trace(jnp.ones((4, 2)))
  with _Recorder() as rec:
    traced.lower()
  assert rec.named("duration") == [(LOWER, "jit(staged)")]


def test_timed_event_costs_nothing_without_listeners():
  if _all_listeners():
    pytest.skip("another listener is registered")
  assert (monitoring_impl.timed_event(COMPILE, "f")
          is monitoring_impl.timed_event(TRACE, "g"))  # one shared no-op context


def test_persistent_cache_miss_then_hit_events(cache_dir):
  lowered = xjax.jit(lambda x: jnp.tanh(x) * 5.0 - x).lower(jnp.ones(6))
  cc.reset_cache()  # the next compilation decides (and reports) again whether it is used
  with _Recorder() as rec:
    lowered.compile()
  events = [e for k, e, _, _ in rec.log if k == "event"]
  assert events == ["/jax/compilation_cache/tasks_using_cache",
                    "/jax/compilation_cache/compile_requests_use_cache",
                    "/jax/compilation_cache/cache_misses"]
  with _Recorder() as rec:
    compiled = lowered.compile()
  events = [e for k, e, _, _ in rec.log if k == "event"]
  assert events == ["/jax/compilation_cache/compile_requests_use_cache",
                    "/jax/compilation_cache/cache_hits"]
  durations = {e: d for k, e, d, _ in rec.log if k == "duration"}
  assert durations["/jax/compilation_cache/cache_retrieval_time_sec"] >= 0.0
  assert "/jax/compilation_cache/compile_time_saved_sec" in durations
  np.testing.assert_allclose(compiled(jnp.ones(6)), np.tanh(1.0) * 5.0 - 1.0, rtol=1e-6)


def test_compile_requests_use_cache_without_a_directory_as_jax(cache_dir):
  x = jnp.ones(11)
  config.update("jax_compilation_cache_dir", None)
  cc.reset_cache()
  with _Recorder() as rec:
    xjax.jit(lambda v: v * 0.5 + 2.0)(x)
  events = [e for k, e, _, _ in rec.log if k == "event"]
  assert events == ["/jax/compilation_cache/tasks_using_cache",
                    "/jax/compilation_cache/compile_requests_use_cache"]


def test_disabled_persistent_cache_records_task_disabled(cache_dir):
  config.update("jax_enable_compilation_cache", False)
  cc.reset_cache()
  with _Recorder() as rec:
    xjax.jit(lambda x: x - 7.5)(jnp.ones(9))
  events = [e for k, e, _, _ in rec.log if k == "event"]
  assert events == ["/jax/compilation_cache/task_disabled_cache"]


# ---------------------------------------------------------------------------- stages


def test_stage_objects_are_instances_of_the_stage_types():
  f = xjax.jit(lambda x, y: x * y)
  x = jnp.ones(3)
  assert isinstance(f, stages.Wrapped)
  assert not isinstance(lambda x: x, stages.Wrapped)
  traced = f.trace(x, 2.0)
  assert isinstance(traced, stages.Traced)
  lowered = f.lower(x, 2.0)
  assert isinstance(lowered, stages.Lowered)
  compiled = lowered.compile()
  assert isinstance(compiled, stages.Compiled)
  assert xjax.stages is stages
  np.testing.assert_array_equal(compiled(x, 2.0), [2.0, 2.0, 2.0])


def test_args_info_describes_each_leaf_and_donation():
  def g(a, b, *, c):
    return a["w"] + b + c

  f = xjax.jit(g, donate_argnums=(1,))
  args = ({"w": jnp.ones((2, 3))}, jnp.zeros((2, 3)))
  lowered = f.lower(*args, c=jnp.float32(1.0))
  info = lowered.args_info
  assert isinstance(info[0][0]["w"], stages.ArgInfo)
  assert info[0][0]["w"].shape == (2, 3) and info[0][0]["w"].dtype == np.float32
  assert not info[0][0]["w"].donated
  assert info[0][1].donated and info[0][1].dtype == np.float32
  assert info[1]["c"].shape == () and not info[1]["c"].donated
  assert lowered.in_tree == tree_util.tree_structure((args, {"c": 1.0}))
  assert lowered.donate_argnums == (1,)
  assert lowered.in_avals[0][1].shape == (2, 3)
  compiled = lowered.compile()
  assert compiled.in_tree == lowered.in_tree and compiled.donate_argnums == (1,)
  assert compiled.out_info.shape == (2, 3)


def test_traced_stage_evaluates_names_and_describes_outputs():
  def pair(x):
    return {"s": jnp.sum(x), "d": x * 2}

  traced = xjax.jit(pair).trace(jnp.arange(4.0))
  assert traced.fun_name == "pair"
  assert traced.out_avals["d"].shape == (4,)
  assert traced.out_info["s"].shape == ()
  out = traced(jnp.ones(4))
  np.testing.assert_array_equal(out["d"], [2.0] * 4)
  assert float(out["s"]) == 4.0
  with pytest.raises(TypeError, match="input pytree"):
    traced(jnp.ones(4), jnp.ones(4))
  with pytest.raises(ValueError, match="lowering_platforms"):
    traced.lower(lowering_platforms=("tpu",))


def test_lowered_compile_takes_compiler_options_and_device_assignment():
  lowered = xjax.jit(lambda x: x / 3.0).lower(jnp.ones(5))
  compiled = lowered.compile({"xla_cpu_enable_fast_math": False},
                             device_assignment=(xjax.devices()[0],))
  np.testing.assert_allclose(compiled(jnp.full(5, 3.0)), np.ones(5))
  with pytest.raises(Exception, match="xla_no_such_option"):
    lowered.compile({"xla_no_such_option": True})
  with pytest.raises(ValueError, match="device_assignment"):
    lowered.compile(device_assignment=(xjax.devices()[0],) * 2)


def test_compiled_analyses_and_runtime_executable():
  lowered = xjax.jit(lambda x: jnp.dot(x, x)).lower(jnp.ones((8, 8)))
  compiled = lowered.compile()
  assert compiled.runtime_executable() is not None
  memory = compiled.memory_analysis()  # JAX 0.10.2 gives the same numbers
  assert memory.argument_size_in_bytes == 8 * 8 * 4
  assert memory.output_size_in_bytes == 8 * 8 * 4
  assert compiled.cost_analysis()["flops"] == 2 * 8 ** 3
  assert lowered.cost_analysis()["flops"] == 2 * 8 ** 3


# ---------------------------------------------------------------------------- api_util


def _wrapped(f, *args, **kwargs):
  return lu.wrap_init(f, debug_info=api_util.debug_info("test", f, args, kwargs))


def test_flatten_fun_runs_on_leaves_and_reports_out_tree():
  def f(x, y, *, scale):
    return {"sum": x["a"] + y, "scaled": (y * scale,)}

  args, kwargs = ({"a": 1.0}, 2.0), {"scale": 3.0}
  leaves, in_tree = tree_util.tree_flatten((args, kwargs))
  flat_f, out_tree = api_util.flatten_fun(_wrapped(f, *args, **kwargs), in_tree)
  with pytest.raises(Exception, match="empty"):
    out_tree()  # nothing stored before a call
  out_leaves = flat_f.call_wrapped(*leaves)
  assert tree_util.tree_unflatten(out_tree(), out_leaves) == {"sum": 3.0, "scaled": (6.0,)}


def test_flatten_fun_nokwargs_traces_under_make_jaxpr():
  def f(x, y):
    return x * y, jnp.sin(x)

  args = (jnp.ones(3), jnp.ones(3))
  leaves, in_tree = tree_util.tree_flatten(args)
  flat_f, out_tree = api_util.flatten_fun_nokwargs(_wrapped(f, *args), in_tree)
  jaxpr = xjax.make_jaxpr(flat_f.call_wrapped)(*leaves)
  assert [str(e.primitive) for e in jaxpr.jaxpr.eqns] == ["mul", "sin"]
  assert out_tree().num_leaves == 2


def test_flatten_fun_rejects_a_plain_function():
  with pytest.raises(TypeError, match="WrappedFun"):
    api_util.flatten_fun(lambda x: x, tree_util.tree_structure(((1,), {})))


def test_argnums_partial_fixes_the_static_arguments():
  def f(a, b, c):
    return a * 100 + b * 10 + c

  g, dyn = api_util.argnums_partial(_wrapped(f, 1, 2, 3), (0, -1), (1, 2, 3))
  assert dyn == (1, 3)
  assert g.call_wrapped(4, 5) == 425
  with pytest.raises(ValueError, match=r"Non-hashable static arguments.*index 1"):
    api_util.argnums_partial(_wrapped(f, 1, [2], 3), (0, 2), (1, [2], 3))
  def count(a, items, c):
    return a + len(items) + c

  items = [7, 8]
  h, dyn = api_util.argnums_partial(_wrapped(count, 1, items, 3), (0, 2), (1, items, 3),
                                    require_static_args_hashable=False)
  assert dyn == (1, 3) and h.call_wrapped(10, 20) == 32


def test_debug_info_names_dynamic_arguments():
  def f(x, cfg, y=0):
    return x

  info = api_util.debug_info("jit", f, (1.0, "c"), {"y": {"a": 2.0}}, static_argnums=(1,))
  assert info.traced_for == "jit"
  assert info.func_src_info.startswith("f at ")
  assert info.arg_names == ("x", "y['a']")


def test_donation_vector_and_rebase_donate_argnums():
  in_tree = tree_util.tree_structure((((1, 2), 3), {"k": (4, 5)}))
  assert api_util.donation_vector((0,), ("k",), in_tree) == (True, True, False, True, True)
  assert api_util.donation_vector((1,), (), in_tree.children()[0], kws=False) == (
      False, False, True)
  assert api_util.rebase_donate_argnums((3, 4), (0, 1)) == (1, 2)
  assert api_util.rebase_donate_argnums((0, 5), (2,)) == (0, 4)
  with pytest.raises(ValueError, match="cannot intersect"):
    api_util.rebase_donate_argnums((1,), (1,))


def test_flatten_axes_broadcasts_a_prefix_and_names_a_mismatch():
  treedef = tree_util.tree_structure(((1, (2, 3)), {}))
  assert api_util.flatten_axes("vmap in_axes", treedef, ((0, None), {}), kws=True) == [
      0, None, None]
  assert api_util.flatten_axes("in_axes", tree_util.tree_structure([1, 2]), 1) == [1, 1]
  with pytest.raises(ValueError, match="vmap in_axes specification must be a tree prefix"):
    api_util.flatten_axes("vmap in_axes", treedef, ((0, (1, 2, 3)), {}), kws=True)


def test_safe_map_and_shaped_abstractify():
  assert api_util.safe_map(lambda a, b: a + b, [1, 2], (10, 20)) == [11, 22]
  with pytest.raises(ValueError, match="argument 2 is shorter than argument 1"):
    api_util.safe_map(lambda a, b: a, [1, 2], [1])
  assert api_util.shaped_abstractify(1.0).str_short() == "float32[]"
  assert api_util.shaped_abstractify(1.0).weak_type
  assert api_util.shaped_abstractify(xjax.ShapeDtypeStruct((2, 3), jnp.int8)).shape == (2, 3)
  assert api_util.shaped_abstractify(np.zeros(4, np.int16)).dtype == np.int16
  with pytest.raises(TypeError, match="abstract array"):
    api_util.shaped_abstractify(object())


# ---------------------------------------------------------------------------- tree_util


def test_keypath_annotations_with_flatten_with_path():
  def describe(path: tree_util.KeyPath, leaf) -> str:
    entries: list[tree_util.KeyEntry] = list(path)
    return f"{tree_util.keystr(tuple(entries))}={leaf}"

  pairs, _ = tree_util.tree_flatten_with_path({"a": [1, 2], "b": 3})
  assert [describe(p, x) for p, x in pairs] == ["['a'][0]=1", "['a'][1]=2", "['b']=3"]
  assert tree_util.KeyPath == tuple[tree_util.KeyEntry, ...]


def test_default_registry_views_the_module_registry():
  reg = tree_util.default_registry
  tree = {"a": 1, "b": (2, None)}
  assert reg.flatten(tree) == tree_util.tree_flatten(tree)
  assert reg.flatten_one_level({"a": 1}) == ((1,), ("a",))
  assert reg.flatten_one_level(1) is None
  assert reg.flatten_one_level_with_keys(1) is None
  paths, _ = reg.flatten_with_path({"a": 1, "b": [2]})
  assert [tree_util.keystr(p) for p, _ in paths] == ["['a']", "['b'][0]"]
  assert reg.is_node(tuple) and not reg.is_node(int)
  with pytest.raises(TypeError, match="class"):
    reg.is_node(None)

  @dataclasses.dataclass
  class Point:
    x: float
    tag: str

  reg.register_dataclass_node(Point, ["x"], ["tag"])
  assert tree_util.tree_map(lambda v: v * 2, Point(1.5, "p")) == Point(3.0, "p")
  assert reg.is_node(Point)

  class Box:
    def __init__(self, v):
      self.v = v

  reg.register_node(Box, lambda b: ((b.v,), None), lambda _, c: Box(*c))
  assert tree_util.tree_leaves([Box(4), Box(5)]) == [4, 5]


# ---------------------------------------------------------------------------- errors


def test_jax_runtime_error_is_what_runtime_failures_raise():
  assert issubclass(xjax.errors.JaxRuntimeError, RuntimeError)

  def fail(x):
    raise ValueError("callback failed on purpose")

  f = xjax.jit(lambda x: xjax.pure_callback(fail, xjax.ShapeDtypeStruct((), np.float32), x))
  with pytest.raises(xjax.errors.JaxRuntimeError, match="callback failed on purpose"):
    f(1.0).block_until_ready()
  with xjax.transfer_guard("disallow"):
    with pytest.raises(xjax.errors.JaxRuntimeError, match="Disallowed host-to-device"):
      jnp.ones(3) + np.ones(3, np.float32)


def test_other_error_classes():
  assert issubclass(xjax.errors.JaxprTypeError, TypeError)
  assert issubclass(xjax.errors.InconclusiveDimensionOperation, Exception)
  from xjax._src import core
  assert xjax.errors.JaxprTypeError is core.JaxprTypeError


# ---------------------------------------------------------------------------- top level


def test_copy_to_host_async_and_host_aliases():
  tree = {"a": jnp.arange(3.0), "b": [jnp.ones(2), "not an array", 4]}
  assert xjax.copy_to_host_async(tree) is tree  # JAX 0.10.2 returns its argument
  np.testing.assert_array_equal(np.asarray(tree["a"]), [0.0, 1.0, 2.0])
  with pytest.warns(UserWarning, match="process_count"):
    assert xjax.host_count() == xjax.process_count()
  with pytest.warns(UserWarning, match="process_index"):
    assert xjax.host_id() == xjax.process_index()
  with pytest.warns(UserWarning, match="process_indices"):
    assert xjax.host_ids() == xjax.process_indices()


def test_support_modules_are_top_level_attributes():
  for name in ("stages", "monitoring", "api_util", "scipy", "tree_util", "errors"):
    assert hasattr(xjax, name), name
  assert xjax.api_util is api_util and xjax.monitoring is monitoring
