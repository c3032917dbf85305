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
