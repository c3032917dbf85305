"""jax_debug_nans / jax_debug_infs: the primitive that made the invalid value is
named (eagerly, and by re-running a jitted function de-optimized), with JAX's
messages, plus a note naming the user's source line."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.config import config

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTICE = ("Invalid nan value encountered in the output of a jax.jit function. "
          "Calling the de-optimized version.")


@pytest.fixture
def debug_nans():
  with config.override("jax_debug_nans", True):
    yield


def _notes(e):
  return getattr(e, "__notes__", [])


def test_jitted_nan_names_the_primitive_and_line(debug_nans, capsys):
  @xjax.jit
  def f(x):
    y = x * 2
    z = jnp.log(y)  # the line the note names
    return z + 1

  with pytest.raises(FloatingPointError) as info:
    f(-1.0)
  assert str(info.value) == "invalid value (nan) encountered in log"  # JAX's message
  assert capsys.readouterr().out.splitlines()[0] == NOTICE
  line = f.__wrapped__.__code__.co_firstlineno + 3
  assert _notes(info.value)[0].startswith("The invalid value was produced by log at ")
  assert f"{__file__}:{line}:" in _notes(info.value)[0]
  assert float(f(1.0)) == pytest.approx(np.log(2.0) + 1)  # valid outputs pass


def test_eager_primitive_nan(debug_nans):
  with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in sqrt"):
    lax.sqrt(-1.0)
  with pytest.raises(FloatingPointError, match="encountered in div"):
    lax.div(0.0, 0.0)
  assert float(lax.sqrt(4.0)) == 2.0
  # Integer outputs are never checked.
  assert int(lax.div(7, 2)) == 3


def test_nested_jit_and_control_flow(debug_nans, capsys):
  inner = xjax.jit(lambda v: jnp.arccos(v))

  @xjax.jit
  def f(x):
    return inner(x * 3) + 1

  with pytest.raises(FloatingPointError, match="encountered in acos") as info:
    f(1.0)
  out = capsys.readouterr().out.splitlines()
  assert out == [NOTICE, NOTICE]  # the outer call, then the nested one, as JAX prints
  assert "acos" in _notes(info.value)[0]

  g = xjax.jit(lambda x: lax.fori_loop(0, 3, lambda i, v: v - 1.0, x) ** 0.5)
  with pytest.raises(FloatingPointError, match="encountered in sqrt|encountered in pow"):
    g(1.0)


def test_nan_in_backward_pass(debug_nans):
  f = xjax.jit(xjax.grad(lambda x: jnp.sqrt(x) * 0.0 + jnp.log(x)))
  with pytest.raises(FloatingPointError, match="encountered in"):
    f(-1.0)


def test_debug_infs(capsys):
  with config.override("jax_debug_infs", True):
    with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in div"):
      xjax.jit(lambda x: 1.0 / x)(0.0)
    with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in exp"):
      lax.exp(1000.0)
  # Off again: infs and nans pass through.
  assert np.isinf(float(xjax.jit(lambda x: 1.0 / x)(0.0)))
  assert np.isnan(float(xjax.jit(jnp.log)(-1.0)))


def test_deoptimized_run_without_invalid_values(debug_nans, capsys):
  # The NaN is a literal of the program: no primitive produces it.
  with pytest.raises(FloatingPointError, match="the de-optimized function did not produce "
                                               "invalid values during its execution"):
    xjax.jit(lambda: jnp.float32(np.nan))()
  assert capsys.readouterr().out.splitlines() == [NOTICE]


def test_donated_arguments_are_not_rerun(debug_nans):
  f = xjax.jit(lambda x: jnp.log(x), donate_argnums=0)
  with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in"):
    f(-jnp.ones(3))


@pytest.mark.slow
def test_environment_variable_from_a_fresh_process():
  code = textwrap.dedent("""
      import xjax, xjax.numpy as jnp
      try:
        xjax.jit(lambda x: jnp.log(x))(-1.0)
      except FloatingPointError as e:
        print("raised:", e)
  """)
  env = dict(os.environ, JAX_DEBUG_NANS="1")
  proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                        cwd=REPO, env=env, timeout=120)
  assert proc.returncode == 0, proc.stderr
  assert proc.stdout.splitlines()[-1] == "raised: invalid value (nan) encountered in log"
