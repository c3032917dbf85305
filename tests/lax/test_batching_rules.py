"""Batching rules, checked mechanically over the spec table in `specs.py`.

For every spec with operands: draw a batch of B=3 argument sets, map each
operand along a random axis or leave it unmapped (shared by the batch), pick a
random out_axes, and compare `vmap` with a Python loop over the batch whose
results are stacked at out_axes. The same cases run under `jit(vmap(...))`,
and `vmap(vmap(...))` maps a second batch axis. The cases are drawn with a
seed per spec and config, so a failure reproduces.
"""
import zlib

import numpy as np
import pytest

import xjax
import xjax.test_util as jtu
from xjax._src import tree_util

import specs
from specs import SPECS
from test_rules import _sample_cases, _x64_if_needed, _config_id, _dtype_name

B = 3
_SAMPLER = np.random.default_rng(4321)


def _cases():
  out = []
  for spec in SPECS:
    picked = _sample_cases(spec, _SAMPLER, 1)
    for _, config, dtype in picked[:1] + [c for c in picked[1:] if c[1].kind == "scalar"][:1]:
      if not config.shapes:
        continue  # nothing to map (iota and friends)
      out.append(pytest.param(spec, config, dtype,
                              id=f"{spec.name}-{_dtype_name(dtype)}-{_config_id(config)}"))
  return out


CASES = _cases()


def _rng(spec, config, dtype, salt=""):
  key = f"{spec.name}|{_config_id(config)}|{_dtype_name(dtype)}|{salt}"
  return np.random.default_rng(zlib.crc32(key.encode()))


def _draw_axes(rng, shapes):
  """A mapped axis (or None) per operand, at least one mapped."""
  axes = [None if rng.random() < 0.3 else int(rng.integers(len(s) + 1)) for s in shapes]
  if all(a is None for a in axes):
    i = int(rng.integers(len(shapes)))
    axes[i] = int(rng.integers(len(shapes[i]) + 1))
  return axes


def _batched_args(spec, config, dtype, rng, axes, size=B):
  """Per-member argument lists, and the batched operands (members stacked at each axis)."""
  members = [spec.make_args(rng, config, dtype) for _ in range(size)]
  for i, a in enumerate(axes):
    if a is None:  # unmapped: every member sees the same value
      for m in members[1:]:
        m[i] = members[0][i]
  batched = [members[0][i] if a is None else np.stack([m[i] for m in members], axis=a)
             for i, a in enumerate(axes)]
  return members, batched


def _loop(fun, members, out_axis):
  outs = [fun(*m) for m in members]
  return tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs], axis=out_axis), *outs)


def _out_axis(rng, fun, args):
  ndim = max((np.ndim(o) for o in tree_util.tree_leaves(fun(*args))), default=0)
  return int(rng.integers(-(ndim + 1), ndim + 1))


def _check(spec, config, dtype, wrap):
  with _x64_if_needed(spec, config, dtype):
    rng = _rng(spec, config, dtype)
    params = spec.params_for(config, dtype)
    fun = lambda *args: spec.fun(*args, **params)
    axes = _draw_axes(rng, config.shapes)
    members, batched = _batched_args(spec, config, dtype, rng, axes)
    out_axis = _out_axis(rng, fun, members[0])
    expected = _loop(fun, members, out_axis)
    actual = wrap(xjax.vmap(fun, in_axes=tuple(axes), out_axes=out_axis))(*batched)
    jtu.assert_close(actual, expected, rtol=spec.tol, atol=spec.tol,
                     err_msg=f"in_axes={axes} out_axes={out_axis}")


@pytest.mark.parametrize("spec, config, dtype", CASES)
def test_vmap_matches_loop(spec, config, dtype):
  _check(spec, config, dtype, lambda f: f)


@pytest.mark.parametrize("spec, config, dtype", CASES)
def test_jit_of_vmap_matches_loop(spec, config, dtype):
  _check(spec, config, dtype, xjax.jit)


@pytest.mark.parametrize("spec, config, dtype", CASES)
def test_vmap_of_vmap_matches_loops(spec, config, dtype):
  with _x64_if_needed(spec, config, dtype):
    rng = _rng(spec, config, dtype, "nested")
    params = spec.params_for(config, dtype)
    fun = lambda *args: spec.fun(*args, **params)
    inner_axes = _draw_axes(rng, config.shapes)
    outer_axes = [None if a is None else 0 for a in inner_axes]
    groups = [_batched_args(spec, config, dtype, rng, inner_axes) for _ in range(2)]
    # Unmapped operands must agree across the outer batch too.
    for i, a in enumerate(inner_axes):
      if a is None:
        for members, batched in groups[1:]:
          for m in members:
            m[i] = groups[0][0][0][i]
          batched[i] = groups[0][1][i]
    expected = np.stack([np.asarray(_loop(fun, members, 0)) for members, _ in groups]) \
        if not spec.primitive.multiple_results else \
        tree_util.tree_map(lambda *xs: np.stack(xs), *[_loop(fun, m, 0) for m, _ in groups])
    outer_batched = [groups[0][1][i] if a is None else np.stack([b[i] for _, b in groups])
                     for i, a in enumerate(outer_axes)]
    actual = xjax.vmap(xjax.vmap(fun, in_axes=tuple(inner_axes)),
                       in_axes=tuple(outer_axes))(*outer_batched)
    jtu.assert_close(actual, expected, rtol=spec.tol, atol=spec.tol,
                     err_msg=f"inner in_axes={inner_axes}")
