"""Jaxpr data structures, eval_jaxpr, typecheck_jaxpr and the printer."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src import core
from xjax._src import jaxpr_pp
from xjax._src import pretty_printer as pp


def _f(x, y):
  return lax.sin(x) * y + 2.0


def test_make_jaxpr_structure_is_inspectable():
  closed = xjax.make_jaxpr(_f)(jnp.ones(3), jnp.ones(3))
  jaxpr = closed.jaxpr
  assert [e.primitive.name for e in jaxpr.eqns] == ["sin", "mul", "add"]
  assert [v.aval for v in jaxpr.invars] == [core.ShapedArray((3,), np.float32)] * 2
  assert jaxpr.outvars == closed.eqns[-1].outvars
  literal = closed.eqns[-1].invars[1]
  assert isinstance(literal, core.Literal) and literal.val == 2.0
  # jnp promotion converts the Python scalar to the strong result dtype, as in JAX.
  assert literal.aval == core.ShapedArray((), np.float32)


def test_eval_jaxpr_round_trip_matches_function():
  x = jnp.array([0.5, 1.0, 2.0])
  y = jnp.array([1.0, -1.0, 3.0])
  closed = xjax.make_jaxpr(_f)(x, y)
  (out,) = core.eval_jaxpr(closed.jaxpr, closed.consts, x, y)
  np.testing.assert_allclose(out, np.sin(x) * y + 2.0, rtol=1e-6)
  (again,) = core.jaxpr_as_fun(closed)(x, y)
  np.testing.assert_allclose(again, out)


def test_eval_jaxpr_under_jit_retraces_into_same_program():
  closed = xjax.make_jaxpr(_f)(jnp.ones(2), jnp.ones(2))
  g = xjax.jit(core.jaxpr_as_fun(closed))
  assert str(xjax.make_jaxpr(g)(jnp.ones(2), jnp.ones(2))).count("sin") == 1


def test_typecheck_rejects_use_before_definition():
  closed = xjax.make_jaxpr(_f)(jnp.ones(3), jnp.ones(3))
  jaxpr = closed.jaxpr
  broken = jaxpr.replace(eqns=list(reversed(jaxpr.eqns)))
  with pytest.raises(core.JaxprTypeError, match="used before definition"):
    core.typecheck_jaxpr(broken)


def test_typecheck_rejects_wrong_binder_type():
  closed = xjax.make_jaxpr(_f)(jnp.ones(3), jnp.ones(3))
  jaxpr = closed.jaxpr
  eqn = jaxpr.eqns[0]
  bad = eqn.replace(outvars=[core.Var(core.ShapedArray((4,), np.float32))])
  broken = jaxpr.replace(eqns=[bad, *jaxpr.eqns[1:]])
  with pytest.raises(core.JaxprTypeError):
    core.typecheck_jaxpr(broken)


def test_typecheck_accepts_traced_jaxprs():
  closed = xjax.make_jaxpr(_f)(jnp.ones((2, 2)), 3.0)
  core.typecheck_jaxpr(closed.jaxpr)


def test_variable_names_continue_past_z():
  assert [jaxpr_pp._alphabetic(i) for i in (0, 25, 26, 27, 51, 52, 701, 702)] == \
      ["a", "z", "ba", "bb", "bz", "ca", "baz", "bba"]  # base 26 with 'a' as zero, as JAX


def test_empty_jaxpr_prints_like_jax():
  assert str(xjax.make_jaxpr(lambda x: x)(jnp.ones(2))) == "{ lambda ; a:f32[2]. let  in (a,) }"


def test_long_invar_list_breaks_as_jax_does():
  # JAX measures each group from where it starts, so this first line is 82 wide.
  text = str(xjax.make_jaxpr(lambda *xs: xs[0])(*[1] * 10))
  assert text == ("{ lambda ; a:i32[] b:i32[] c:i32[] d:i32[] e:i32[] f:i32[] g:i32[] h:i32[] "
                  "i:i32[]\n    j:i32[]. let\n    \n  in (a,) }")


def test_pretty_printer_groups_fit_or_break():
  doc = pp.group(pp.nest(2, pp.concat([pp.text("f("), pp.brk(""), pp.text("x,"), pp.brk(),
                                        pp.text("y")])) + pp.text(")"))
  assert doc.format(80) == "f(x, y)"
  assert doc.format(4) == "f(\n  x,\n  y)"


def test_shaped_array_reprs_and_equality():
  a = core.ShapedArray((3,), np.float32)
  assert repr(a) == "ShapedArray(float32[3])"
  assert a.str_short(short_dtypes=True) == "f32[3]"
  weak = core.ShapedArray((), np.int32, weak_type=True)
  assert repr(weak) == "ShapedArray(int32[], weak_type=True)"
  assert a == core.ShapedArray([3], "float32") and hash(a) == hash(core.ShapedArray((3,), np.float32))
  assert a != weak.update(shape=(3,), dtype=np.float32, weak_type=True)


def test_get_aval_of_python_scalars_and_bad_values():
  assert core.get_aval(1) == core.ShapedArray((), np.int32, weak_type=True)
  assert core.get_aval(True) == core.ShapedArray((), np.bool_)
  assert core.get_aval(np.float64(1.0)) == core.ShapedArray((), np.float32)
  with pytest.raises(TypeError, match="is not a valid JAX type"):
    core.get_aval("abc")
  with pytest.raises(OverflowError, match="Python int 1099511627776 too large to convert to int32"):
    core.get_aval(2 ** 40)


def _nested(x, y):
  def body(c, a):
    c = xjax.lax.cond(a > 0, lambda v: jnp.sin(v) * a, lambda v: v - a, c)
    return c, c * 2
  c, ys = xjax.lax.scan(body, x, y)
  c = xjax.lax.fori_loop(0, 3, lambda i, v: v + i, c)
  c = xjax.checkpoint(lambda v: jnp.cos(v) * v)(c)
  return xjax.jit(lambda v, w: v + w.sum())(c, ys)


def test_typecheck_accepts_jaxprs_inside_jaxprs():
  closed = xjax.make_jaxpr(_nested)(1.0, jnp.arange(4.0))
  core.typecheck_jaxpr(closed.jaxpr)
  core.typecheck_jaxpr(xjax.make_jaxpr(xjax.grad(_nested))(1.0, jnp.arange(4.0)).jaxpr)


def test_typecheck_recurses_into_the_jaxprs_of_params():
  closed = xjax.make_jaxpr(_nested)(1.0, jnp.arange(4.0))
  scan = next(e for e in closed.jaxpr.eqns if e.primitive.name == "scan")
  body = scan.params["jaxpr"]
  broken_body = body.jaxpr.replace(eqns=list(reversed(body.jaxpr.eqns)))
  broken_scan = scan.replace(params={**scan.params,
                                     "jaxpr": core.ClosedJaxpr(broken_body, body.consts)})
  broken = closed.jaxpr.replace(
      eqns=[broken_scan if e is scan else e for e in closed.jaxpr.eqns])
  with pytest.raises(core.JaxprTypeError, match="used before definition"):
    core.typecheck_jaxpr(broken)


def test_close_jaxpr_and_pretty_print_use_color():
  from xjax._src.interpreters import partial_eval as pe_impl
  closed = xjax.make_jaxpr(lambda x: x + 1.0)(1.0)
  reclosed = pe_impl.close_jaxpr(closed.jaxpr)
  assert reclosed.consts == [] and reclosed.jaxpr is closed.jaxpr
  assert closed.pretty_print(use_color=False) == closed.pretty_print() == str(closed)


def test_eqn_repr_is_its_printed_line_and_subjaxprs():
  closed = xjax.make_jaxpr(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x))(1.0)
  assert repr(closed.eqns[0]) == "a:bool[] = gt b 0.0:f32[]"
  inner = list(core.subjaxprs(closed.jaxpr))
  assert len(inner) == 2 and all(isinstance(j, core.Jaxpr) for j in inner)


def test_not_a_jax_type_messages():
  with pytest.raises(TypeError, match=r"^Argument 'foo' of type <class 'str'> is not a valid "
                     "JAX type"):
    xjax.grad(lambda x: x)("foo")
  with pytest.raises(TypeError, match="is not a valid JAX type"):
    core.get_aval(np.array([1, 2], dtype=object))

  def f(x):
    return (2.0, f)
  with pytest.raises(TypeError, match=r"function f at .* traced for eval_shape returned a "
                     r"value of type <class 'function'> at output component \[1\], which is "
                     "not a valid JAX type"):
    xjax.eval_shape(f, 1)
