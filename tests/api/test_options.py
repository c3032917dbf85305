"""Nothing accepted and silently ignored (issue 12): every option either acts or
raises NotImplementedError naming itself; the traceback-filtering and
matmul-precision flags act as JAX's do."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.config import config

X = np.ones((2, 2), np.float32)


# -- options not implemented yet raise, naming themselves -----------------------


@pytest.mark.parametrize("name", ["abstracted_axes"])
def test_jit_unimplemented_options_raise(name):
  with pytest.raises(NotImplementedError, match=f"jit\\({name}=...\\) is not implemented"):
    xjax.jit(lambda a: a, **{name: ("x",)})


@pytest.mark.parametrize("name", ["in_shardings", "out_shardings"])
def test_jit_sharding_leaves_must_be_shardings(name):
  with pytest.raises(ValueError, match=f"{name} leaves must be Shardings"):
    xjax.jit(lambda a: a, **{name: "x"})(X)


def test_jit_backend_must_be_present():
  with pytest.raises(RuntimeError, match="Unknown backend: 'gpu' requested"):
    xjax.jit(lambda a: a, backend="gpu")
  np.testing.assert_array_equal(xjax.jit(lambda a: a + 1, backend="cpu")(X), X + 1)


def test_jit_compiler_options_reach_xla():
  f = xjax.jit(lambda a: a * 2, compiler_options={"xla_cpu_enable_fast_math": True})
  np.testing.assert_array_equal(f(X), 2 * X)
  with pytest.raises(Exception, match="No such compile option: 'bogus_option'"):
    xjax.jit(lambda a: a * 3, compiler_options={"bogus_option": 1})(X)


@pytest.mark.parametrize("transform", [xjax.grad, xjax.value_and_grad])
def test_grad_reduce_axes_raises(transform):
  with pytest.raises(NotImplementedError, match="reduce_axes argument to grad is deprecated"):
    transform(lambda a: a, reduce_axes=("i",))


def test_lowered_as_text_dialects():
  lowered = xjax.jit(lambda a: a + 1).lower(X)
  assert lowered.as_text() == lowered.as_text(dialect="stablehlo")
  assert "stablehlo.add" in lowered.as_text()
  hlo = lowered.as_text(dialect="hlo")
  assert hlo.startswith("HloModule") and "add(" in hlo
  with pytest.raises(ValueError, match="Unknown dialect"):
    lowered.as_text(dialect="tosa")
  with pytest.raises(NotImplementedError, match="debug_info=True"):
    lowered.as_text(debug_info=True)


# -- jax_default_matmul_precision --------------------------------------------------


def test_default_matmul_precision_reaches_jaxpr_and_lowering():
  f = lambda a: a @ a
  assert "precision" not in str(xjax.make_jaxpr(f)(X))
  with xjax.default_matmul_precision("float32"):
    assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in str(xjax.make_jaxpr(f)(X))
    text = xjax.jit(f).lower(X).as_text()
    assert "precision = [HIGHEST, HIGHEST]" in text  # as JAX's as_text prints it
    np.testing.assert_allclose(xjax.jit(f)(X), X @ X)
  with xjax.default_matmul_precision("tensorfloat32"):
    assert "Precision.HIGH," in str(xjax.make_jaxpr(f)(X))


def test_explicit_precision_wins_over_the_default():
  with xjax.default_matmul_precision("highest"):
    jaxpr = str(xjax.make_jaxpr(lambda a: lax.dot(a, a, precision="default"))(X))
  assert "precision=(Precision.DEFAULT, Precision.DEFAULT)" in jaxpr


def test_precision_pairs_and_names():
  jaxpr = str(xjax.make_jaxpr(lambda a: lax.dot(a, a, precision=("highest", lax.Precision.HIGH)))(X))
  assert "precision=(Precision.HIGHEST, Precision.HIGH)" in jaxpr
  assert lax.Precision("bfloat16") is lax.Precision.DEFAULT
  with pytest.raises(ValueError, match="Unknown matmul precision"):
    lax.dot(X, X, precision="fast")


def test_matmul_precision_flag_values_are_checked():
  with pytest.raises(ValueError, match="new enum value must be None or in"):
    config.update("jax_default_matmul_precision", "bogus")
  with xjax.default_matmul_precision("BF16_BF16_F32"):  # a dot algorithm preset CPU XLA runs
    np.testing.assert_allclose(jnp.dot(X, X), np.dot(X, X), rtol=2e-2)


def test_precision_change_retraces_jit():
  f = xjax.jit(lambda a: a @ a)
  f(X)
  with xjax.default_matmul_precision("highest"):
    assert "HIGHEST" in f.lower(X).as_text()
  assert "HIGHEST" not in f.lower(X).as_text()


# -- jax_traceback_filtering ---------------------------------------------------------

_RAISE_IN_JIT = textwrap.dedent("""
    import traceback, xjax, xjax.numpy as jnp

    def inner(x):
      return jnp.dot(x, jnp.ones(4))

    @xjax.jit
    def f(x):
      return inner(x) + 1

    try:
      xjax.grad(lambda x: f(x).sum())(jnp.ones(3))
    except TypeError as e:
      frames = [fr.filename for fr in traceback.extract_tb(e.__traceback__)]
      print("XJAX_FRAMES", sum("/xjax/" in name for name in frames))
      print("USER_FRAMES", sum(name == "<string>" for name in frames))
      print("NOTE", any("JAX has removed its internal frames" in n for n in
                        getattr(e, "__notes__", [])))
      print("CAUSE", type(e.__cause__).__name__)
""")


def _run_filtering(mode):
  env = {k: v for k, v in __import__("os").environ.items() if k != "JAX_TRACEBACK_FILTERING"}
  if mode is not None:
    env["JAX_TRACEBACK_FILTERING"] = mode
  proc = subprocess.run([sys.executable, "-c", _RAISE_IN_JIT], capture_output=True, text=True,
                        env=env, timeout=120)
  assert proc.returncode == 0, proc.stderr
  return dict(line.split(" ", 1) for line in proc.stdout.splitlines())


@pytest.mark.slow
def test_traceback_filtering_default_removes_internal_frames_quietly():
  out = _run_filtering(None)
  assert out["XJAX_FRAMES"] == "0"
  assert int(out["USER_FRAMES"]) >= 4  # <module>, the lambda, f, inner
  assert out["NOTE"] == "True"


@pytest.mark.slow
def test_traceback_filtering_remove_frames_chains_the_unfiltered_trace():
  out = _run_filtering("remove_frames")
  assert out["XJAX_FRAMES"] == "0"
  assert out["CAUSE"] == "UnfilteredStackTrace"


@pytest.mark.slow
def test_traceback_filtering_off_keeps_every_frame():
  out = _run_filtering("off")
  assert int(out["XJAX_FRAMES"]) > 5
  assert out["NOTE"] == "False"


def test_traceback_filtering_flag_values_are_checked():
  with pytest.raises(ValueError, match="new enum value must be in"):
    config.update("jax_traceback_filtering", "sometimes")


# -- promotion-mode context managers (issue 13) ----------------------------------------


def test_numpy_rank_promotion_modes():
  import warnings
  with xjax.numpy_rank_promotion("warn"):
    with pytest.warns(UserWarning, match="Following NumPy automatic rank promotion for add on "
                                         r"shapes \(3,\) \(2, 3\).*disable this warning"):
      jnp.ones(3) + jnp.ones((2, 3))
  with xjax.numpy_rank_promotion("raise"):
    with pytest.raises(ValueError, match="Operands could not be broadcast together for add"):
      jnp.ones(3) + jnp.ones((2, 3))
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    jnp.ones(3) + jnp.ones((2, 3))  # 'allow' outside the block
  with pytest.raises(ValueError, match="new enum value must be in"):
    with xjax.numpy_rank_promotion("sometimes"):
      pass


def test_numpy_dtype_promotion_modes():
  with xjax.numpy_dtype_promotion("strict"):
    with pytest.raises(xjax.dtypes.TypePromotionError, match="no available implicit dtype "
                                                             "promotion path"):
      jnp.ones(3, jnp.int32) + jnp.ones(3, jnp.float32)
    assert (jnp.ones(3) + jnp.ones(3)).dtype == np.float32
  assert (jnp.ones(3, jnp.int32) + jnp.ones(3, jnp.float32)).dtype == np.float32


def test_effort_and_level_compiler_options_are_build_options():
  # As JAX: these four are fields of XLA's build options, not option overrides.
  f = lambda x: jnp.sqrt(x ** 2) + 1.
  for name, value in (("exec_time_optimization_effort", 0.0), ("memory_fitting_effort", 0.0),
                      ("optimization_level", 19), ("memory_fitting_level", 9)):
    assert float(xjax.jit(f, compiler_options={name: value})(-2.)) == 3.
  with pytest.raises(xjax.errors.JaxRuntimeError, match="No such"):
    xjax.jit(f, compiler_options={"exec_time_compilation_effort": 0.0})(1.)
