"""jax.debug.print / callback / log / breakpoint: output under every transformation,
formatting as JAX does it, ordering, dead-code elimination, printed jaxprs
(JAX's goldens), output surviving exceptions and interpreter exit."""
import io
import logging
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _lines(capsys):
  return capsys.readouterr().out.splitlines()


def _normalize(text):
  text = re.sub(r" at 0x[0-9a-f]+>", " at 0xXXXXXXXXXXXX>", text)
  return re.sub(r"np_printoptions=\(.*\)\n", "np_printoptions=...\n", text)


# ----------------------------------------------------------------------------
# debug.print


@pytest.mark.parametrize("jit", [False, True])
def test_print_formats_like_str_format(capsys, jit):
  def f(x, y):
    xjax.debug.print("x={x} y={}", y, x=x)
    xjax.debug.print("{0} {0} {name}", x, name="static")
    xjax.debug.print("{:.2f}", y)
    xjax.debug.print("no placeholders", x, y, skip_format_check=True)
    xjax.debug.print("tree {}", {"a": x})
    return x

  f = xjax.jit(f) if jit else f
  f(jnp.arange(3.0), jnp.float32(0.5))
  # As JAX 0.10.2 prints them (unordered prints may come in any order under jit).
  expected = ["x=[0. 1. 2.] y=0.5", "[0. 1. 2.] [0. 1. 2.] static", "0.50",
              "no placeholders [0. 1. 2.] 0.5", "tree {'a': Array([0., 1., 2.], dtype=float32)}"]
  assert sorted(_lines(capsys)) == sorted(expected)


def test_print_uses_numpy_print_options_of_the_call(capsys):
  f = xjax.jit(lambda x: xjax.debug.print("{}", x))
  with np.printoptions(precision=2):
    f(jnp.float32(1 / 3) * jnp.ones(2))
  assert _lines(capsys) == ["[0.33 0.33]"]


def test_print_format_errors():
  with pytest.raises(ValueError, match=r"Unused positional arguments to `jax.debug.print`: "
                                       r"\[1\]"):
    xjax.debug.print("x", 1)
  with pytest.raises(ValueError, match="You may be passing an f-string"):
    xjax.debug.print("{x}", x=1, y=2)
  with pytest.raises(TypeError, match="unexpected arguments in the two-call form"):
    xjax.debug.print(None, 1)


def test_print_two_call_form_and_skip_format_check(capsys):
  xjax.jit(lambda x: xjax.debug.print(ordered=True)("x={x}", x=x))(2.0)
  xjax.debug.print("a", 1, skip_format_check=True)
  assert _lines(capsys) == ["x=2.0", "a 1"]


def test_print_under_vmap_prints_each_element(capsys):
  xjax.vmap(lambda x, y: xjax.debug.print("{} {}", x, y), in_axes=(0, None))(
      jnp.arange(3), 7)
  assert _lines(capsys) == ["0 7", "1 7", "2 7"]
  xjax.jit(xjax.vmap(xjax.vmap(lambda x: xjax.debug.print("{}", x))))(
      jnp.arange(4).reshape(2, 2))
  assert sorted(_lines(capsys)) == ["0", "1", "2", "3"]


def test_print_under_grad_sees_primals_once(capsys):
  def f(x):
    xjax.debug.print("x={}", x)
    y = jnp.sin(x)
    xjax.debug.print("y={}", y)
    return y

  # As JAX 0.10.2 prints them: a float32 scalar formats as a Python float.
  np.testing.assert_allclose(xjax.grad(f)(1.0), np.cos(1.0), rtol=1e-6)
  assert _lines(capsys) == ["x=1.0", "y=0.8414709568023682"]
  xjax.jit(xjax.grad(f))(2.0)
  assert sorted(_lines(capsys)) == ["x=2.0", "y=0.9092974066734314"]
  xjax.jvp(f, (1.0,), (1.0,))
  assert len(_lines(capsys)) == 2
  xjax.hessian(f)(1.0)
  assert _lines(capsys)[0] == "x=1.0"


@pytest.mark.parametrize("jit", [False, True])
def test_print_in_control_flow(capsys, jit):
  def f(x):
    def body(c, xs):
      xjax.debug.print("scan c={} x={}", c, xs, ordered=True)
      return c + xs, None

    c, _ = lax.scan(body, x, jnp.arange(3.0))

    def loop(v):
      xjax.debug.print("while {}", v, ordered=True)
      return v + 1

    c = lax.while_loop(lambda v: v < 5, loop, c)
    c = lax.cond(c > 4, lambda v: (xjax.debug.print("true {}", v, ordered=True), v)[1],
                 lambda v: (xjax.debug.print("false {}", v, ordered=True), v)[1], c)
    c = lax.fori_loop(0, 2, lambda i, v: (xjax.debug.print("fori {}", i, ordered=True),
                                          v)[1], c)
    return c

  f = xjax.jit(f) if jit else f
  f(0.0)
  assert _lines(capsys) == ["scan c=0.0 x=0.0", "scan c=0.0 x=1.0", "scan c=1.0 x=2.0",
                            "while 3.0", "while 4.0", "true 5.0", "fori 0", "fori 1"]


def test_print_survives_dead_code_elimination(capsys):
  def f(x):
    def body(c, _):
      xjax.debug.print("tick {}", c)
      return c + 1, None

    lax.scan(body, x, None, length=2)  # results unused: the scan must still run
    lax.cond(x > 0, lambda: xjax.debug.print("pos"), lambda: None)
    return 0.0

  xjax.jit(f)(1.0)
  assert sorted(_lines(capsys)) == ["pos", "tick 1.0", "tick 2.0"]
  # vjp keeps the forward print; the backward pass adds none.
  _, pullback = xjax.vjp(lambda x: (xjax.debug.print("fwd {}", x), x * 3)[1], 2.0)
  assert _lines(capsys) == ["fwd 2.0"]
  pullback(1.0)
  assert _lines(capsys) == []


def test_print_under_checkpoint_and_custom_jvp(capsys):
  g = xjax.checkpoint(lambda x: (xjax.debug.print("remat {}", x), jnp.sin(x))[1])
  xjax.grad(g)(1.0)
  assert _lines(capsys) == ["remat 1.0", "remat 1.0"]  # forward, and again when rematerialized

  @xjax.custom_jvp
  def h(x):
    xjax.debug.print("primal {}", x)
    return x * 2

  h.defjvp(lambda p, t: (h(p[0]), t[0] * 2))
  xjax.jit(xjax.grad(h))(3.0)
  assert _lines(capsys) == ["primal 3.0"]


def test_ordered_prints_across_nested_jit(capsys):
  inner = xjax.jit(lambda x: xjax.debug.print("inner {}", x, ordered=True))

  @xjax.jit
  def f(x):
    for i in range(5):
      xjax.debug.print("outer {}", i, ordered=True)
      inner(x + i)

  f(0)
  expected = []
  for i in range(5):
    expected += [f"outer {i}", f"inner {i}"]
  assert _lines(capsys) == expected


def test_print_jaxprs_match_jax():
  # Printed by JAX 0.10.2 (np_printoptions and function addresses normalized).
  expected = """{ lambda ; a:f32[]. let
    debug_print[
      fmt=x={x}
      has_placeholders=True
      in_tree=PyTreeDef(((), {'x': *}))
      logging_record=None
      np_printoptions=...
      ordered=False
      partitioned=False
      static_args=()
    ] a
  in (a,) }"""
  f = lambda x: (xjax.debug.print("x={x}", x=x), x)[1]
  assert _normalize(str(xjax.make_jaxpr(f)(1.0))) == expected
  expected_grad = """{ lambda ; a:f32[]. let
    debug_print[
      fmt={}
      has_placeholders=True
      in_tree=PyTreeDef(((*,), {}))
      logging_record=None
      np_printoptions=...
      ordered=False
      partitioned=False
      static_args=()
    ] a
    _:f32[] = mul a 2.0:f32[]
    b:f32[] = mul 1.0:f32[] 2.0:f32[]
  in (b,) }"""
  g = lambda x: (xjax.debug.print("{}", x), x * 2)[1]
  assert _normalize(str(xjax.make_jaxpr(xjax.grad(g))(1.0))) == expected_grad


@pytest.mark.slow
def test_debug_print_output_is_kept_when_the_program_fails_or_exits():
  # A fresh process: output from inside jit reaches the pipe before an
  # exception ends the program, and before a plain exit.
  code = textwrap.dedent("""
      import xjax, xjax.numpy as jnp
      f = xjax.jit(lambda x: (xjax.debug.print("value {}", x), x / 0)[1])
      y = f(jnp.float32(3))
      xjax.debug.print("eager {}", 4)
      xjax.jit(lambda x: xjax.debug.print("last {}", x))(5)
      raise SystemExit(float(y) == float("inf") and 3)
  """)
  proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                        cwd=REPO, timeout=120)
  assert proc.returncode == 3, proc.stderr
  assert proc.stdout.splitlines() == ["value 3.0", "eager 4", "last 5"]


# ----------------------------------------------------------------------------
# debug.callback, debug.log, effects_barrier


@pytest.mark.parametrize("jit", [False, True])
def test_debug_callback_arguments(jit):
  seen = []

  def host(x, tag, *, d):
    seen.append((type(x), float(x), tag, type(d["v"]), int(d["v"])))

  def f(x):
    xjax.debug.callback(host, x, "tag", d={"v": jnp.int32(7)}, ordered=True)
    xjax.debug.callback(ordered=True)(host, x + 1, "two", d={"v": 1})
    return x

  f = xjax.jit(f) if jit else f
  f(2.0)
  # Leaves that are valid array values (the int 1 too) arrive as Arrays, as in JAX.
  assert sorted(seen, key=str) == [(xjax.Array, 2.0, "tag", xjax.Array, 7),
                                   (xjax.Array, 3.0, "two", xjax.Array, 1)]
  with pytest.raises(TypeError, match="first argument to jax.debug.callback must be callable"):
    xjax.debug.callback(3, 1.0)
  with pytest.raises(TypeError, match="unexpected arguments in the two-call form"):
    xjax.debug.callback(None, 1.0)


def test_debug_callback_vmap_and_jaxpr():
  seen = []
  f = lambda x: (xjax.debug.callback(lambda v: seen.append(float(v)), x), x)[1]
  xjax.jit(xjax.vmap(f))(jnp.arange(3.0))
  assert seen == [0.0, 1.0, 2.0]
  text = _normalize(str(xjax.make_jaxpr(f)(1.0)))
  # Printed by JAX 0.10.2 for the same function.
  assert text == """{ lambda ; a:f32[]. let
    debug_callback[
      callback=<function debug_callback.<locals>._debug_callback.<locals>._flat_callback at 0xXXXXXXXXXXXX>
      effect=Debug
      partitioned=False
    ] a
  in (a,) }"""
  assert xjax.make_jaxpr(f)(1.0).effects == {xjax.debug.DebugEffect()}


def test_debug_log_goes_to_logging(caplog):
  with caplog.at_level(logging.INFO):
    xjax.jit(lambda x: xjax.debug.log("logged {}", x))(1.5)
  records = [r for r in caplog.records if r.getMessage() == "logged 1.5"]
  assert len(records) == 1 and records[0].levelno == logging.INFO
  assert records[0].pathname == __file__


def test_effects_barrier():
  log = []
  xjax.jit(lambda x: xjax.debug.callback(lambda v: log.append(float(v)), x))(1.0)
  xjax.effects_barrier()
  assert log == [1.0]


# ----------------------------------------------------------------------------
# breakpoint


def test_breakpoint_without_a_terminal_prints_the_frames(capsys, monkeypatch):
  monkeypatch.setattr(sys, "stdin", io.StringIO(""))

  @xjax.jit
  def f(x):
    y = x * 2
    xjax.debug.breakpoint()
    return y

  f(3.0)
  out = capsys.readouterr().out
  assert "no interactive terminal" in out
  assert "xjax.debug.breakpoint()" in out
  assert "y = 6.0" in out and "x = 3.0" in out


class _Tty(io.StringIO):
  def isatty(self):
    return True


def test_breakpoint_cli_commands(capsys, monkeypatch):
  monkeypatch.setattr(sys, "stdin", _Tty("p y + 1\nw\nup\nc\n"))

  def f(x):
    y = jnp.sin(x)
    xjax.debug.breakpoint()
    return y

  xjax.jit(f)(0.0)
  out = capsys.readouterr().out
  assert "Entering jdb:" in out and "(jdb) " in out
  assert "Array(1., dtype=float32)" in out
  # token: runs once the token is computed and returns it unchanged.
  monkeypatch.setattr(sys, "stdin", _Tty("c\n"))
  out = xjax.jit(lambda x: xjax.debug.breakpoint(token=x * 2))(2.0)
  assert float(out) == 4.0
  with pytest.raises(ValueError, match="mutually exclusive"):
    xjax.debug.breakpoint(ordered=True, token=1.0)
