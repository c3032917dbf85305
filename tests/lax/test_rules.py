"""Generic rule tests, parametrized over the spec table in `specs.py`.

For every spec: the eager implementation matches the NumPy reference; the
abstract evaluation matches what was computed; jit matches eager without
retracing; the lowering compiles and runs on 0-d and empty operands for every
listed dtype; Python scalar operands give JAX's weak types; and unlisted dtypes
and mismatched shapes raise JAX's error class. The cartesian product of
configs and dtypes is sampled with a fixed seed: every dtype and every edge
shape kind appears, plus `XJAX_NUM_GENERATED_CASES` (default 2) random cases
per spec.
"""
import contextlib
import os
import zlib

import numpy as np
import pytest

import xjax
import xjax.test_util as jtu
from xjax import lax
from xjax._src.config import enable_x64

import specs
from specs import SPECS

NUM_GENERATED_CASES = int(os.environ.get("XJAX_NUM_GENERATED_CASES", "2"))
_SAMPLER = np.random.default_rng(1234)

# ----------------------------------------------------------------------------
# Case generation


def _dtype_name(d) -> str:
  return np.dtype(d).name


def _param_id(value) -> str:
  if isinstance(value, np.dtype):
    return value.name
  if hasattr(value, "_fields"):  # dimension numbers: their values only
    return "".join(str(tuple(v)) for v in value).replace(" ", "")
  return str(value).replace(" ", "")


def _config_id(config: specs.Config) -> str:
  shapes = "_".join("x".join(map(str, s)) or "s" for s in config.shapes)
  params = ",".join(f"{k}={_param_id(v)}" for k, v in config.params.items())
  return f"{shapes}{'-' + params if params else ''}"


def _sample_cases(spec, sampler, n_random):
  """(config, dtype) pairs: each dtype with a general config, each edge kind once, n random."""
  picked = []
  general = [i for i, c in enumerate(spec.configs) if c.kind == "general"] or \
      list(range(len(spec.configs)))
  for d in spec.dtypes:
    picked.append((general[sampler.integers(len(general))], d))
  for kind in ("scalar", "empty", "size_one"):
    candidates = [i for i, c in enumerate(spec.configs) if c.kind == kind]
    if candidates:
      picked.append((candidates[sampler.integers(len(candidates))],
                     spec.dtypes[sampler.integers(len(spec.dtypes))]))
  product = [(i, d) for i in range(len(spec.configs)) for d in spec.dtypes]
  for k in sampler.choice(len(product), size=min(n_random, len(product)), replace=False):
    picked.append(product[k])
  unique = list(dict.fromkeys((i, np.dtype(d)) for i, d in picked))
  return [(spec, spec.configs[i], d) for i, d in unique]


def _param(spec, config, dtype, test=None):
  marks = []
  reason = specs.KNOWN_DIVERGENCES.get((test, spec.name, _dtype_name(dtype)))
  if reason:
    marks.append(pytest.mark.xfail(strict=True, reason=reason))
  return pytest.param(spec, config, np.dtype(dtype), marks=marks,
                      id=f"{spec.name}-{_dtype_name(dtype)}-{_config_id(config)}")


IMPL_CASES = [_param(*c) for s in SPECS for c in _sample_cases(s, _SAMPLER, NUM_GENERATED_CASES)]
# One case per spec: the first dtype with a general config.
JIT_CASES = [_param(*_sample_cases(s, _SAMPLER, 0)[0]) for s in SPECS]


def _case_rng(spec, config, dtype):
  key = f"{spec.name}|{_config_id(config)}|{_dtype_name(dtype)}"
  return np.random.default_rng(zlib.crc32(key.encode()))


def _needs_x64(spec, config, dtype) -> bool:
  dtypes = list(spec.operand_dtypes(dtype))
  dtypes += [v for v in spec.params_for(config, dtype).values() if isinstance(v, np.dtype)]
  return any(specs.x64_dtype(d) for d in dtypes)


def _x64_if_needed(spec, config, dtype):
  return enable_x64(True) if _needs_x64(spec, config, dtype) else contextlib.nullcontext()


def _bound(spec, params):
  return lambda *args: spec.fun(*args, **params)


def _bound_ref(spec, params):
  return lambda *args: spec.ref(*args, **params)


# ----------------------------------------------------------------------------
# Values


@pytest.mark.parametrize("spec, config, dtype", IMPL_CASES)
def test_impl_matches_reference(spec, config, dtype):
  with _x64_if_needed(spec, config, dtype):
    args = spec.make_args(_case_rng(spec, config, dtype), config, dtype)
    params = spec.params_for(config, dtype)
    jtu.check_against_numpy(_bound(spec, params), _bound_ref(spec, params), args,
                            rtol=spec.tol, atol=spec.tol)


@pytest.mark.parametrize("spec, config, dtype", IMPL_CASES)
def test_abstract_eval_matches_result(spec, config, dtype):
  """The traced result's aval is the reference result's shape and dtype, strongly typed.

  (`check_against_numpy` checks the other half: XLA's buffers match the avals.)
  """
  with _x64_if_needed(spec, config, dtype):
    args = spec.make_args(_case_rng(spec, config, dtype), config, dtype)
    params = spec.params_for(config, dtype)
    structs = xjax.eval_shape(_bound(spec, params), *args)
    expected = spec.ref(*args, **params)
    for struct, ref in zip(xjax.tree_util.tree_leaves(structs),
                           xjax.tree_util.tree_leaves(expected), strict=True):
      ref = np.asarray(ref)
      assert (struct.shape, struct.dtype) == (ref.shape, ref.dtype)
      assert not struct.weak_type  # array operands give strongly typed results


@pytest.mark.parametrize("spec, config, dtype", JIT_CASES)
def test_jit_matches_eager(spec, config, dtype):
  with _x64_if_needed(spec, config, dtype):
    args = spec.make_args(_case_rng(spec, config, dtype), config, dtype)
    jtu.check_jit_matches_eager(_bound(spec, spec.params_for(config, dtype)), args,
                                rtol=spec.tol, atol=spec.tol)


def _edge_cases():
  """Per spec, its first 0-d and first empty config, with float32 (or the first dtype) and
  one more sampled dtype (`test_impl_matches_reference` runs every dtype)."""
  for spec in SPECS:
    edges = [c for kind in ("scalar", "empty")
             for c in [c for c in spec.configs if c.kind == kind][:1]]
    if not edges:
      continue
    first = specs.F32 if specs.F32 in spec.dtypes else spec.dtypes[0]
    others = [d for d in spec.dtypes if d != first]
    picked = [first] + ([others[_SAMPLER.integers(len(others))]] if others else [])
    for d in picked:
      yield pytest.param(spec, tuple(edges), np.dtype(d), id=f"{spec.name}-{_dtype_name(d)}")


@pytest.mark.parametrize("spec, edges, dtype", list(_edge_cases()))
def test_lowering_runs_on_edge_shapes(spec, edges, dtype):
  """One jit program applies the primitive to 0-d and to empty operands."""
  with contextlib.ExitStack() as stack:
    for config in edges:
      stack.enter_context(_x64_if_needed(spec, config, dtype))
    rng = _case_rng(spec, edges[0], dtype)
    args = [spec.make_args(rng, c, dtype) for c in edges]
    params = [spec.params_for(c, dtype) for c in edges]
    fun = xjax.jit(lambda *groups: [spec.fun(*g, **p) for g, p in zip(groups, params, strict=True)])
    ref = lambda *groups: [spec.ref(*g, **p) for g, p in zip(groups, params, strict=True)]
    jtu.check_against_numpy(fun, ref, args, rtol=spec.tol, atol=spec.tol)


# ----------------------------------------------------------------------------
# Weak types

_PY_SCALAR_TYPES = {np.dtype(np.float32): float, np.dtype(np.int32): int,
                    np.dtype(np.complex64): complex}


def _weak_type_cases():
  for spec in SPECS:
    if spec.weak_operands is None:
      continue
    scalar_configs = [c for c in spec.configs if c.kind == "scalar"]
    for d in (specs.F32, specs.I32, specs.C64):
      if d in spec.dtypes and scalar_configs and all(
          spec.operand_dtypes(d)[i] in _PY_SCALAR_TYPES for i in spec.weak_operands):
        yield pytest.param(spec, scalar_configs[0], d, id=f"{spec.name}-{_dtype_name(d)}")
        break


@pytest.mark.parametrize("spec, config, dtype", list(_weak_type_cases()))
def test_python_scalar_operands_are_weak(spec, config, dtype):
  """Python scalars are weakly typed; the result is weak iff every weak-typing operand is."""
  args = spec.make_args(_case_rng(spec, config, dtype), config, dtype)
  params = spec.params_for(config, dtype)
  arg_dtypes = spec.operand_dtypes(dtype)
  expected = spec.ref(*args, **params)
  as_scalar = lambda i: _PY_SCALAR_TYPES[arg_dtypes[i]](args[i].item())
  weak = set(spec.weak_operands)

  # Every weak-typing operand a Python scalar: the result is weak.
  all_scalars = [as_scalar(i) if i in weak else xjax.device_put(a) for i, a in enumerate(args)]
  out = spec.fun(*all_scalars, **params)
  jtu.assert_close(out, expected, rtol=spec.tol, atol=spec.tol)
  assert out.aval.weak_type, f"{spec.name} of Python scalars gave {out.aval}"

  # `lax.add(x, 1.0)`: an array among them makes the result strongly typed.
  if len(weak) > 1:
    first = min(weak)
    mixed = [xjax.device_put(a) if i == first else s for i, (a, s) in
             enumerate(zip(args, all_scalars, strict=True))]
    out = spec.fun(*mixed, **params)
    jtu.assert_close(out, expected, rtol=spec.tol, atol=spec.tol)
    assert not out.aval.weak_type, f"{spec.name} of an array and scalars gave {out.aval}"


def test_python_scalar_keeps_its_own_dtype():
  # A Python scalar is a weak array of its default dtype, then lax's dtype check applies
  # (texts recorded from JAX 0.10.2).
  with pytest.raises(TypeError, match=r"lax.add requires arguments to have the same dtypes, got "
                     r"float16, float32. \(Tip: jnp.add is a similar function"):
    lax.add(np.ones(2, np.float16), 1.0)
  with pytest.raises(TypeError, match=r"lax.mul requires .* got bfloat16, int32. \(Tip: jnp.multiply"):
    lax.mul(np.ones(2, xjax.numpy.bfloat16), 2)
  with pytest.raises(TypeError, match=r"^lax.lt requires arguments to have the same dtypes, got "
                     r"float16, float32.$"):
    lax.lt(np.ones(2, np.float16), 0.0)
  with pytest.raises(TypeError, match="the first argument to pow must have an inexact dtype"):
    lax.pow(np.ones(2, np.float16), 2.0)
  with pytest.raises(TypeError, match="lax.clamp requires arguments to have the same dtypes, got "
                     "float32, float16, float32."):
    lax.clamp(0.0, np.ones(2, np.float16), 1.0)
  out = lax.add(np.ones(2, np.float32), 1.0)
  assert out.dtype == np.float32 and not out.aval.weak_type
  assert lax.add(1, 2).aval.weak_type  # two Python scalars stay weak, as in JAX
  assert lax.add(np.ones(2, np.int32), 1).dtype == np.int32


# ----------------------------------------------------------------------------
# Errors


def _general_config(spec):
  return next((c for c in spec.configs if c.kind == "general"), spec.configs[0])


def _rejection_cases():
  for spec in SPECS:
    if not spec.check_rejects:
      continue
    for d in specs.ALL_DTYPES:
      if d in spec.dtypes or d in spec.also_accepts or specs.x64_dtype(d):
        continue
      yield _param(spec, _general_config(spec), d, test="rejects_unlisted_dtypes")


@pytest.mark.parametrize("spec, config, dtype", list(_rejection_cases()))
def test_rejects_unlisted_dtypes(spec, config, dtype):
  rng = _case_rng(spec, config, dtype)
  args = [jtu.rand_default(rng)(s, d)
          for s, d in zip(config.shapes, spec.operand_dtypes(dtype), strict=True)]
  with pytest.raises(spec.reject_error(dtype)):
    spec.fun(*args, **spec.params_for(config, dtype))


def _mixed_dtype_cases():
  for spec in SPECS:
    narrow = [d for d in spec.dtypes if not specs.x64_dtype(d)]
    if spec.arg_dtypes is None and len(spec.makers) > 1 and len(narrow) > 1 \
        and spec.check_rejects and not spec.mixes_dtypes:
      yield pytest.param(spec, id=spec.name)


@pytest.mark.parametrize("spec", list(_mixed_dtype_cases()))
def test_rejects_mixed_dtypes(spec):
  """Operands of two different (each accepted) dtypes raise TypeError: lax does not promote."""
  first, second = [d for d in spec.dtypes if not specs.x64_dtype(d)][:2]
  config = _general_config(spec)
  rng = _case_rng(spec, config, first)
  args = [jtu.rand_default(rng)(s, first if i == 0 else second)
          for i, s in enumerate(config.shapes)]
  with pytest.raises(TypeError):
    spec.fun(*args, **spec.params_for(config, first))


def _bad_shape_cases():
  for spec in SPECS:
    for bad in spec.bad_configs:
      config, error = bad if isinstance(bad, tuple) else (bad, TypeError)
      yield pytest.param(spec, config, error, id=f"{spec.name}-{_config_id(config)}")


@pytest.mark.parametrize("spec, config, error", list(_bad_shape_cases()))
def test_rejects_mismatched_shapes(spec, config, error):
  """Shapes or params that do not fit raise JAX's error class (TypeError, mostly)."""
  dtype = spec.dtypes[0]
  args = spec.make_args(_case_rng(spec, config, dtype), config, dtype)
  with pytest.raises(error):
    spec.fun(*args, **spec.params_for(config, dtype))


# ----------------------------------------------------------------------------
# Known answers from real JAX


def _example_cases():
  for example_id, fun, args, expected in specs.EXAMPLES:
    modes = ["eager", "jit"] + (["numpy_args"] if example_id.startswith("convert") else [])
    for mode in modes:
      yield pytest.param(fun, args, expected, mode, id=f"{example_id}-{mode}")


@pytest.mark.parametrize("fun, args, expected, mode", list(_example_cases()))
def test_known_answer_from_jax(fun, args, expected, mode):
  if mode == "eager":
    out = fun(*[xjax.device_put(a) for a in args])
  elif mode == "jit":
    out = xjax.jit(fun)(*args)
  else:  # NumPy operands: conversions of constants are folded on the host
    out = fun(*args)
  if isinstance(expected, tuple):
    for o, e in zip(out, expected, strict=True):
      jtu.assert_close(np.asarray(o), e, rtol=1e-6, atol=1e-6)
  else:
    jtu.assert_close(np.asarray(out), expected, rtol=1e-6, atol=1e-6)
