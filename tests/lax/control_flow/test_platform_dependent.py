"""lax.platform_dependent and the platform_index primitive: the branch is the
lowering platform's, chosen at lowering (eagerly: at once), the compiled module
holds only that branch, and transformations act as they do on switch. Printed
jaxprs and error texts were recorded from JAX 0.10.2 on CPU."""
import textwrap

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.lax.control_flow import conditionals
from xjax._src.lax.control_flow import platform


def _close(a, b, tol=1e-6):
  np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def sin_on_cpu(x):
  return lax.platform_dependent(x, cpu=jnp.sin, default=jnp.cos)


def _jaxpr(text):
  return textwrap.dedent(text).strip("\n")


# ----------------------------------------------------------------------------
# Values: eagerly, under jit, and the choice among groups


@pytest.mark.parametrize("wrap", [lambda f: f, xjax.jit], ids=["eager", "jit"])
def test_picks_the_cpu_branch(wrap):
  x = np.array([0.3, -1.2, 2.0], np.float32)
  _close(wrap(sin_on_cpu)(x), np.sin(x))
  _close(wrap(lambda v: lax.platform_dependent(v, tpu=jnp.sin, default=jnp.cos))(x), np.cos(x))
  _close(wrap(lambda v: lax.platform_dependent(v, cuda=jnp.sin, rocm=jnp.tan, cpu=jnp.exp))(x),
         np.exp(x))


@pytest.mark.parametrize("wrap", [lambda f: f, xjax.jit], ids=["eager", "jit"])
def test_unknown_platform_names_never_match(wrap):
  f = lambda v: lax.platform_dependent(v, foo=jnp.sin, default=jnp.cos)
  _close(wrap(f)(1.0), np.cos(1.0))


def test_pytrees_several_operands_and_no_operands():
  out = lax.platform_dependent({"a": 1.0}, 2.0, cpu=lambda d, s: {"b": d["a"] + s},
                               default=lambda d, s: {"b": d["a"] - s})
  assert list(out) == ["b"]
  _close(out["b"], 3.0)
  f = xjax.jit(lambda x, y: lax.platform_dependent(
      x, y, cpu=lambda a, b: (a * b, a), default=lambda a, b: (a + b, a)))
  prod, same = f(3.0, 2.0)
  _close(prod, 6.0)
  _close(same, 3.0)
  assert lax.platform_dependent(default=lambda: 3) == 3
  _close(xjax.jit(lambda: lax.platform_dependent(
      cpu=lambda: jnp.float32(1), default=lambda: jnp.float32(2)))(), 1.0)


def test_closes_over_traced_values():
  f = xjax.jit(lambda i, v: lax.platform_dependent(v, cpu=lambda a: a[i], default=lambda a: a[0]))
  _close(f(2, jnp.arange(3.0)), 2.0)
  _close(f(-1, jnp.arange(3.0)), 2.0)


def test_eager_call_runs_only_the_chosen_branch():
  calls = []

  def cpu(x):
    calls.append("cpu")
    return x + 1

  def other(x):
    calls.append("default")
    return x - 1

  _close(lax.platform_dependent(1.0, cpu=cpu, default=other), 2.0)
  assert calls == ["cpu"]
  calls.clear()
  _close(xjax.jit(lambda x: lax.platform_dependent(x, cpu=cpu, default=other))(1.0), 2.0)
  assert sorted(calls) == ["cpu", "default"]  # traced: every branch


# ----------------------------------------------------------------------------
# Transformations


@pytest.mark.parametrize("wrap", [lambda f: f, xjax.jit], ids=["eager", "jit"])
def test_grad(wrap):
  for x in [0.5, -2.0]:
    _close(wrap(xjax.grad(sin_on_cpu))(x), np.cos(x))
  f = lambda x, y: lax.platform_dependent(x, y, cpu=lambda a, b: a * b * b, default=lambda a, b: a)
  gx, gy = wrap(xjax.grad(f, argnums=(0, 1)))(3.0, 2.0)
  _close(gx, 4.0)
  _close(gy, 12.0)


def test_jvp_linearize_and_second_derivative():
  primal, tangent = xjax.jvp(sin_on_cpu, (0.3,), (2.0,))
  _close(primal, np.sin(0.3))
  _close(tangent, 2 * np.cos(0.3))
  _close(xjax.linearize(sin_on_cpu, 0.3)[1](1.0), np.cos(0.3))
  _close(xjax.jit(xjax.grad(xjax.grad(sin_on_cpu)))(0.3), -np.sin(0.3))


@pytest.mark.parametrize("wrap", [lambda f: f, xjax.jit], ids=["eager", "jit"])
def test_vmap(wrap):
  x = np.linspace(-2, 2, 5, dtype=np.float32)
  _close(wrap(xjax.vmap(sin_on_cpu))(x), np.sin(x))
  _close(wrap(xjax.vmap(xjax.grad(sin_on_cpu)))(x), np.cos(x))
  f = lambda v, s: lax.platform_dependent(v, s, cpu=lambda a, b: a * b, default=lambda a, b: a + b)
  _close(wrap(xjax.vmap(f, in_axes=(0, None)))(x, 3.0), x * 3)
  _close(wrap(xjax.vmap(f, in_axes=(None, 0)))(2.0, x), 2 * x)


def test_vmap_with_a_batched_index_keeps_the_platform_branch():
  """A batched index of a platform cond is replaced by a fresh platform_index."""
  closed = xjax.make_jaxpr(sin_on_cpu)(1.0)
  params = closed.jaxpr.eqns[1].params
  assert params["branches_platforms"] == (("cpu",), None)
  f = lambda i, x: conditionals.cond_p.bind(i, x, **params)[0]
  x = np.array([0.1, 0.2, 0.3], np.float32)
  _close(xjax.vmap(f)(np.array([1, 0, 1], np.int32), x), np.sin(x))
  text = str(xjax.make_jaxpr(xjax.vmap(f))(np.array([1, 0, 1], np.int32), x))
  assert text.count("platform_index[platforms=(('cpu',), None)]") == 1
  assert "select_n" not in text


# ----------------------------------------------------------------------------
# Printed jaxprs (recorded from JAX 0.10.2)


def test_jaxpr_prints_platform_index_and_branches_platforms():
  assert str(xjax.make_jaxpr(sin_on_cpu)(1.0)) == _jaxpr("""
    { lambda ; a:f32[]. let
        b:i32[] = platform_index[platforms=(('cpu',), None)] 
        c:f32[] = cond[
          branches=(
            { lambda ; d:f32[]. let e:f32[] = sin d in (e,) }
            { lambda ; f:f32[]. let g:f32[] = cos f in (g,) }
          )
          branches_platforms=(('cpu',), None)
        ] b a
      in (c,) }""")


def test_jaxpr_without_default_and_with_no_operands():
  f = lambda x: lax.platform_dependent(x, tpu=jnp.sin, cuda=jnp.cos)
  assert str(xjax.make_jaxpr(f)(1.0)) == _jaxpr("""
    { lambda ; a:f32[]. let
        b:i32[] = platform_index[platforms=(('tpu',), ('cuda',))] 
        c:f32[] = cond[
          branches=(
            { lambda ; d:f32[]. let e:f32[] = sin d in (e,) }
            { lambda ; f:f32[]. let g:f32[] = cos f in (g,) }
          )
          branches_platforms=(('tpu',), ('cuda',))
        ] b a
      in (c,) }""")
  g = lambda x: lax.platform_dependent(cpu=lambda: jnp.float32(1), default=lambda: jnp.float32(2))
  assert str(xjax.make_jaxpr(g)(1.0)) == _jaxpr("""
    { lambda ; a:f32[]. let
        b:i32[] = platform_index[platforms=(('cpu',), None)] 
        c:f32[] = cond[
          branches=(
            { lambda ; . let  in (1.0:f32[],) }
            { lambda ; . let  in (2.0:f32[],) }
          )
          branches_platforms=(('cpu',), None)
        ] b
      in (c,) }""")
  h = lambda x: lax.platform_dependent(x, default=jnp.sin)
  assert str(xjax.make_jaxpr(h)(1.0)) == _jaxpr("""
    { lambda ; a:f32[]. let
        b:i32[] = platform_index[platforms=(None,)] 
        c:f32[] = cond[
          branches=({ lambda ; d:f32[]. let e:f32[] = sin d in (e,) })
          branches_platforms=(None,)
        ] b a
      in (c,) }""")


def test_jaxpr_joins_platforms_sharing_a_function_and_forwards_outputs():
  f = lambda x, y: lax.platform_dependent(x, y, cpu=lambda a, b: (a * b, a),
                                          default=lambda a, b: (a + b, a))
  assert str(xjax.make_jaxpr(f)(1.0, 2.0)) == _jaxpr("""
    { lambda ; a:f32[] b:f32[]. let
        c:i32[] = platform_index[platforms=(('cpu',), None)] 
        d:f32[] = cond[
          branches=(
            { lambda ; e:f32[] f:f32[]. let g:f32[] = mul e f in (g,) }
            { lambda ; h:f32[] i:f32[]. let j:f32[] = add h i in (j,) }
          )
          branches_platforms=(('cpu',), None)
        ] c a b
      in (d, a) }""")
  g = lambda x: lax.platform_dependent(x, cpu=jnp.sin, tpu=jnp.sin, cuda=jnp.cos,
                                       default=jnp.tan)
  text = str(xjax.make_jaxpr(g)(1.0))
  assert "platform_index[platforms=(('cpu', 'tpu'), ('cuda',), None)]" in text
  assert "branches_platforms=(('cpu', 'tpu'), ('cuda',), None)" in text


def test_jaxpr_under_jvp_and_vmap():
  f = lambda x, t: xjax.jvp(sin_on_cpu, (x,), (t,))
  assert str(xjax.make_jaxpr(f)(1.0, 1.0)) == _jaxpr("""
    { lambda ; a:f32[] b:f32[]. let
        c:i32[] = platform_index[platforms=(('cpu',), None)] 
        d:f32[] e:f32[] = cond[
          branches=(
            { lambda ; f:f32[] g:f32[]. let
                h:f32[] = sin f
                i:f32[] = cos f
                j:f32[] = mul g i
              in (h, j) }
            { lambda ; k:f32[] l:f32[]. let
                m:f32[] = cos k
                n:f32[] = sin k
                o:f32[] = mul l n
                p:f32[] = neg o
              in (m, p) }
          )
          branches_platforms=(('cpu',), None)
        ] c a b
      in (d, e) }""")
  assert str(xjax.make_jaxpr(xjax.vmap(sin_on_cpu))(jnp.ones(3))) == _jaxpr("""
    { lambda ; a:f32[3]. let
        b:i32[] = platform_index[platforms=(('cpu',), None)] 
        c:f32[3] = cond[
          branches=(
            { lambda ; d:f32[3]. let e:f32[3] = sin d in (e,) }
            { lambda ; f:f32[3]. let g:f32[3] = cos f in (g,) }
          )
          branches_platforms=(('cpu',), None)
        ] b a
      in (c,) }""")


def test_grad_jaxpr_keeps_branches_platforms_on_both_conds():
  text = str(xjax.make_jaxpr(xjax.grad(sin_on_cpu))(1.0))
  assert text.count("platform_index[") == 1
  assert text.count("cond[") == 2
  assert text.count("branches_platforms=(('cpu',), None)") == 2


def test_an_ordinary_cond_prints_no_branches_platforms():
  text = str(xjax.make_jaxpr(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x))(1.0))
  assert "branches_platforms" not in text and "platform_index" not in text
  assert text.endswith("    ] c a\n  in (d,) }")


# ----------------------------------------------------------------------------
# Lowering keeps only the chosen branch


def _lowered(f, *args):
  return xjax.jit(f).lower(*args).compiler_ir()


def test_lowered_module_holds_only_the_cpu_branch():
  text = _lowered(sin_on_cpu, 1.0)
  assert "stablehlo.sine" in text
  assert "stablehlo.cosine" not in text and "stablehlo.case" not in text
  text = _lowered(lambda x: lax.platform_dependent(x, tpu=jnp.sin, default=jnp.cos), 1.0)
  assert "stablehlo.cosine" in text and "stablehlo.sine" not in text
  # An ordinary cond keeps both branches in a case.
  text = _lowered(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x), 1.0)
  assert "stablehlo.case" in text and "stablehlo.sine" in text and "stablehlo.cosine" in text


def test_lowered_grad_holds_only_the_cpu_branch():
  text = _lowered(xjax.grad(sin_on_cpu), 1.0)
  assert "stablehlo.cosine" in text and "stablehlo.case" not in text
  assert "stablehlo.negate" not in text  # the default branch's derivative is -sin


@pytest.mark.parametrize("target, op", [("cuda", "stablehlo.cosine"), ("rocm", "chlo.tan"),
                                        ("tpu", "stablehlo.exponential"),
                                        ("cpu", "stablehlo.sine")])
def test_lowering_for_another_platform_picks_its_branch(monkeypatch, target, op):
  monkeypatch.setattr(platform, "lowering_platform", lambda: target)
  f = lambda x: lax.platform_dependent(x, cpu=jnp.sin, cuda=jnp.cos, rocm=jnp.tan, tpu=jnp.exp)
  text = _lowered(f, 1.0)
  present = [name for name in ("stablehlo.sine", "stablehlo.cosine", "chlo.tan",
                               "stablehlo.exponential") if f'"{name}"' in text]
  assert present == [op]


def test_lowering_for_a_platform_with_no_branch_is_an_error(monkeypatch):
  monkeypatch.setattr(platform, "lowering_platform", lambda: "rocm")
  f = lambda x: lax.platform_dependent(x, cpu=jnp.sin, cuda=jnp.cos)
  with pytest.raises(NotImplementedError) as info:
    _lowered(f, 1.0)
  assert str(info.value) == ("MLIR translation rule for primitive 'platform_index(platforms="
                             "(('cpu',), ('cuda',)))' not found for platform rocm")


@pytest.mark.parametrize("name, version, expected", [
    ("cpu", "cpu", "cpu"), ("gpu", "PJRT C API\ncuda 12030", "cuda"),
    ("gpu", "rocm 60200", "rocm"), ("gpu", "", "cuda"), ("cuda", "12.3", "cuda"),
    ("TPU", "", "tpu")])
def test_canonical_platform(name, version, expected):
  assert platform.canonical_platform(name, version) == expected


def test_this_backend_lowers_for_cpu():
  assert platform.lowering_platform() == xjax.default_backend() == "cpu"


# ----------------------------------------------------------------------------
# Errors (JAX's classes and texts)


_NO_CPU = ("MLIR translation rule for primitive 'platform_index(platforms=(('tpu',), "
           "('cuda',)))' not found for platform cpu")


@pytest.mark.parametrize("run", [
    lambda f: f(1.0), lambda f: xjax.jit(f)(1.0), lambda f: xjax.jit(f).lower(1.0),
    lambda f: xjax.grad(f)(1.0), lambda f: xjax.vmap(f)(jnp.ones(2))],
    ids=["eager", "jit", "lower", "grad", "vmap"])
def test_no_branch_for_the_platform_and_no_default(run):
  f = lambda x: lax.platform_dependent(x, tpu=jnp.sin, cuda=jnp.cos)
  with pytest.raises(NotImplementedError) as info:
    run(f)
  assert str(info.value) == _NO_CPU


def test_no_error_until_lowering():
  f = lambda x: lax.platform_dependent(x, foo=jnp.sin)
  xjax.make_jaxpr(f)(1.0)  # tracing alone is fine
  with pytest.raises(NotImplementedError) as info:
    xjax.jit(f)(1.0)
  assert str(info.value) == ("MLIR translation rule for primitive "
                             "'platform_index(platforms=(('foo',),))' not found for platform cpu")


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(gpu=jnp.sin), ValueError, "Use 'cuda' or 'rocm' for lax.platform_dependent."),
    (dict(cpu=1), TypeError, "lax.platform_dependent: the 'cpu' branch must be a callable."),
    (dict(cpu=jnp.sin, default=3), TypeError,
     "lax.platform_dependent: the 'default' branch must be a callable.")])
def test_bad_branches(kwargs, error, message):
  with pytest.raises(error) as info:
    lax.platform_dependent(1.0, **kwargs)
  assert str(info.value) == message


def test_branch_outputs_must_agree_when_traced():
  f = lambda x: lax.platform_dependent(x, cpu=lambda v: v, default=lambda v: (v, v))
  g = lambda x: lax.platform_dependent(x, cpu=lambda v: v, tpu=lambda v: v[None])
  h = lambda x: lax.platform_dependent(x, cpu=lambda v: v, default=lambda v: v.astype(jnp.int32))
  with pytest.raises(TypeError, match="switch branch outputs must have the same pytree "
                                      "structure"):
    xjax.jit(f)(1.0)
  with pytest.raises(TypeError, match="so the shapes do not match"):
    xjax.jit(g)(1.0)
  with pytest.raises(TypeError, match="so the dtypes do not match"):
    xjax.jit(h)(1.0)
  for fun in (f, g, h):  # eagerly only the chosen branch runs, as in JAX
    _close(fun(1.0), 1.0)
