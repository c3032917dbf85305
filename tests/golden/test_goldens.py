"""xjax against golden files recorded from real JAX 0.10.2 (see tests/golden/README.md).

The case modules are shared with tools/make_goldens.py: the same code runs
under both libraries, so printed jaxprs, error messages and reprs must agree
exactly.
"""
import json
import os
import warnings

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.config import enable_x64

import error_cases
import jaxpr_cases
import repr_cases

HERE = os.path.dirname(os.path.abspath(__file__))
LIBS = (xjax, jnp, lax, np)


def _load(name):
  with open(os.path.join(HERE, name)) as f:
    return json.load(f)


JAXPRS = _load("jaxprs.json")
ERRORS = _load("errors.json")
REPRS = _load("reprs.json")

# Cases whose feature is not built yet (issue numbers in the closing notes).
NOT_YET: set[str] = {
    'arange',
    'arange_float',
    'arange_int',
    'arange_of_tracer',
    'argmax_axis1',
    'argsort',
    'array_aval',
    'array_of_mixed_list',
    'at_add_idx',
    'at_set',
    'at_set_bad_update_shape',
    'broadcast_to',
    'broadcast_to_incompatible',
    'concatenate',
    'concatenate_mismatch',
    'cond_non_scalar_pred',
    'cumsum',
    'dynamic_slice',
    'dynamic_slice_wrong_index_count',
    'eval_shape_tuple',
    'expand_dims',
    'f32_2d',
    'gather_idx_array',
    'grad_int_input',
    'grad_non_scalar_output',
    'hash_of_array',
    'i32_3d',
    'index_int_0',
    'index_none',
    'index_with_float',
    'item_assignment_0',
    'jit_list_arg_to_sum',
    'jnp_clip',
    'lax_cumlogsumexp',
    'long_f32',
    'long_i32',
    'matmul_batched',
    'matmul_mat_mat',
    'matmul_shape_mismatch',
    'matmul_vec_mat',
    'max_keepdims',
    'mean_axis0',
    'medium_f32_wraps',
    'nonzero_under_jit',
    'np_asarray_of_tracer',
    'pad',
    'prng_key_legacy',
    'reshape',
    'reshape_minus_one',
    'reshape_two_minus_ones',
    'reshape_wrong_size',
    'scan_carry_shape_mismatch',
    'seed_arange_oob',
    'seed_at_add_2d',
    'seed_at_get_fill',
    'seed_at_get_oob',
    'seed_cond_false',
    'seed_fori_loop',
    'seed_nansum_bool_index',
    'seed_permissive_sum',
    'seed_random_key',
    'seed_random_normal',
    'seed_random_split',
    'seed_random_split_subkey_normal',
    'seed_reshape_np_prod',
    'seed_reshape_shape_prod',
    'seed_static_loop',
    'seed_sum_list',
    'seed_unsafe_cast_uint8',
    'seed_while_loop',
    'shaped_array_bool_2d',
    'shaped_array_f32',
    'shaped_array_scalar_weak',
    'shaped_array_str_short',
    'slice_1_3',
    'slice_step_2',
    'sort',
    'squeeze',
    'strong_f32_scalar',
    'strong_i32_scalar',
    'sum_axis',
    'sum_axis_out_of_bounds',
    'too_many_indices',
    'top_k',
    'tracer_grad',
    'tracer_shape_prod',
    'tracer_vmap',
    'transpose',
    'transpose_axes',
    'transpose_bad_axes',
    'uint8_ops',
    'unary_floor_round',
    'vmap_in_axes_out_of_range',
    'vmap_inconsistent_sizes',
    'where_select_n',
    'while_loop_carry_type_mismatch',
    'x64-arange',
    'x64-arange_float',
    'x64-arange_int',
    'x64-argmax_axis1',
    'x64-mean_axis0',
    'x64-seed_permissive_sum',
    'x64-shaped_array_f32',
}


def _params(golden, cases_fn):
  ids = [c[0] for c in cases_fn(*LIBS)]
  out = []
  for case_id in golden["cases"]:
    marks = [pytest.mark.xfail(strict=True, reason="not built yet")] if case_id in NOT_YET else []
    out.append(pytest.param(case_id, id=case_id, marks=marks))
  assert set(ids) == set(golden["cases"]), "golden file out of date: run make goldens"
  return out


def _case(cases_fn, case_id):
  for case in cases_fn(*LIBS):
    if case[0] == case_id:
      return case
  raise KeyError(case_id)


def _x64_params(golden):
  return [pytest.param(case_id, id=f"x64-{case_id}",
                       marks=[pytest.mark.xfail(strict=True, reason="not built yet")]
                       if f"x64-{case_id}" in NOT_YET else [])
          for case_id in golden.get("x64_section", {}).get("cases", {})]


def _check_jaxpr(case_id, expected):
  case = _case(jaxpr_cases.cases, case_id)
  fn, args = case[1], case[2]
  kwargs = case[3] if len(case) > 3 else {}
  if "error" in expected:
    pytest.skip("real JAX could not trace this case")
  closed = xjax.make_jaxpr(fn, **kwargs)(*args)
  assert str(closed) == expected["text"]
  assert [a.str_short() for a in closed.in_avals] == expected["in_avals"]
  assert [a.str_short() for a in closed.out_avals] == expected["out_avals"]


@pytest.mark.parametrize("case_id", _params(JAXPRS, jaxpr_cases.cases))
def test_jaxpr_text_matches_jax(case_id):
  _check_jaxpr(case_id, JAXPRS["cases"][case_id])


@pytest.mark.parametrize("case_id", _x64_params(JAXPRS))
def test_jaxpr_text_matches_jax_x64(case_id):
  with enable_x64(True):
    _check_jaxpr(case_id, JAXPRS["x64_section"]["cases"][case_id])


def _check_error(case_id, expected):
  thunk = _case(error_cases.cases, case_id)[1]
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with pytest.raises(Exception) as info:
      thunk()
  assert type(info.value).__name__ == expected["type"]
  assert error_cases.normalize(str(info.value)) == expected["message"]


@pytest.mark.parametrize("case_id", _params(ERRORS, error_cases.cases))
def test_error_message_matches_jax(case_id):
  _check_error(case_id, ERRORS["cases"][case_id])


def _check_repr(case_id, expected):
  thunk = _case(repr_cases.cases, case_id)[1]
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    obj = thunk()
  assert error_cases.normalize(repr(obj)) == expected["repr"]
  assert error_cases.normalize(str(obj)) == expected["str"]
  if "fstring" in expected:
    assert error_cases.normalize(obj.fstring) == expected["fstring"]
  if "warnings" in expected:
    got = [f"{w.category.__name__}: {error_cases.normalize(str(w.message))}" for w in caught]
    assert got == expected["warnings"]


@pytest.mark.parametrize("case_id", _params(REPRS, repr_cases.cases))
def test_repr_matches_jax(case_id):
  _check_repr(case_id, REPRS["cases"][case_id])


@pytest.mark.parametrize("case_id", _x64_params(REPRS))
def test_repr_matches_jax_x64(case_id):
  with enable_x64(True):
    _check_repr(case_id, REPRS["x64_section"]["cases"][case_id])
