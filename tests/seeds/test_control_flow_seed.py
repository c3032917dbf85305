"""The Sharp Bits seed (001), "Control flow" and the iterator examples, with their printed outputs."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import grad, jit, lax, make_jaxpr


def test_fori_loop_iterator_examples(capsys):
  array = jnp.arange(10)
  print(lax.fori_loop(0, 10, lambda i, x: x + array[i], 0))  # expected result 45
  iterator = iter(range(10))
  print(lax.fori_loop(0, 10, lambda i, x: x + next(iterator), 0))  # unexpected result 0
  assert capsys.readouterr().out == "45\n0\n"


def func11(arr, extra):
  ones = jnp.ones(arr.shape)

  def body(carry, aelems):
    ae1, ae2 = aelems
    return (carry + ae1 * ae2 + extra, carry)
  return lax.scan(body, 0., (arr, ones))


def test_scan_iterator_example():
  text = str(make_jaxpr(func11)(jnp.arange(16), 5.))
  assert "scan[" in text and "length=16" in text and "num_consts=1" in text
  # "throws error": an iterator is not an array (JAX 0.10.2's message).
  with pytest.raises(TypeError, match="Error interpreting argument to .* as an abstract array. "
                     "The problematic value is of type <class 'range_iterator'> and was passed "
                     "to the function at path arr"):
    make_jaxpr(func11)(iter(range(16)), 5.)


def test_cond_iterator_example():
  array_operand = jnp.array([0.])
  assert repr(lax.cond(True, lambda x: x + 1, lambda x: x - 1, array_operand)) == \
      "Array([1.], dtype=float32)"
  iter_operand = iter(range(10))
  with pytest.raises(TypeError, match="is not a valid JAX type"):
    lax.cond(True, lambda x: next(x) + 1, lambda x: next(x) - 1, iter_operand)


def test_python_control_flow_with_grad(capsys):
  def f(x):
    if x < 3:
      return 3. * x ** 2
    return -4 * x
  print(grad(f)(2.))
  print(grad(f)(4.))
  assert capsys.readouterr().out == "12.0\n-4.0\n"


def test_python_for_loops_unroll_under_jit(capsys):
  @jit
  def f(x):
    for i in range(3):
      x = 2 * x
    return x
  print(f(3))

  @jit
  def g(x):
    y = 0.
    for i in range(x.shape[0]):
      y = y + x[i]
    return y
  print(g(jnp.array([1., 2., 3.])))
  assert capsys.readouterr().out == "24\n6.0\n"


def test_python_if_under_jit_needs_static_argnums():
  @jit
  def f(x):
    if x < 3:
      return 3. * x ** 2
    return -4 * x

  with pytest.raises(xjax.errors.TracerBoolConversionError) as info:
    f(2)
  msg = str(info.value)
  assert msg.startswith("Attempted boolean conversion of traced array with shape bool[].")
  assert "depends on the value of the argument x" in msg

  def f2(x):
    if x < 3:
      return 3. * x ** 2
    return -4 * x
  assert str(jit(f2, static_argnums=(0,))(2.)) == "12.0"

  def h(x, n):
    y = 0.
    for i in range(n):
      y = y + x[i]
    return y
  assert repr(jit(h, static_argnums=(1,))(jnp.array([2., 3., 4.]), 2)) == \
      "Array(5., dtype=float32)"


def test_structured_control_flow_outputs():
  operand = jnp.array([0.])
  assert repr(lax.cond(True, lambda x: x + 1, lambda x: x - 1, operand)) == \
      "Array([1.], dtype=float32)"
  assert repr(lax.cond(False, lambda x: x + 1, lambda x: x - 1, operand)) == \
      "Array([-1.], dtype=float32)"
  assert repr(lax.while_loop(lambda x: x < 10, lambda x: x + 1, 0)) == \
      "Array(10, dtype=int32, weak_type=True)"
  assert repr(lax.fori_loop(0, 10, lambda i, x: x + i, 0)) == \
      "Array(45, dtype=int32, weak_type=True)"


def _python_cond(x):
  if x < 3:
    return 3. * x ** 2
  return -4 * x


def _python_while(x):
  while x < 10.:
    x = x * 2.
  return x


@pytest.mark.parametrize("construct", ["if", "for", "while", "lax.cond", "lax.while_loop",
                                       "lax.fori_loop", "lax.scan"])
def test_summary_table(construct):
  """The seed's table: which constructs work under jit and under grad (fwd only for loops)."""
  fns = {
      "if": _python_cond,
      "for": lambda x: sum(x * i for i in range(3)),
      "while": _python_while,
      "lax.cond": lambda x: lax.cond(x < 3, lambda x: 3. * x ** 2, lambda x: -4 * x, x),
      "lax.while_loop": lambda x: lax.while_loop(lambda c: c < 10., lambda c: c * 2., x),
      "lax.fori_loop": lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.0),
      "lax.scan": lambda x: lax.scan(lambda c, a: (c * x + a, c), 0., jnp.arange(3.))[0],
  }
  f = fns[construct]
  jit_ok = construct not in ("if", "while")  # value-dependent Python control flow
  if jit_ok:
    np.testing.assert_allclose(jit(f)(2.), f(2.), rtol=1e-6)
  else:
    with pytest.raises(xjax.errors.TracerBoolConversionError):
      jit(f)(2.)
  if construct == "lax.while_loop":
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
      grad(f)(2.)
    _, t = xjax.jvp(f, (2.,), (1.,))
    assert float(t) == 8.0  # 2 -> 4 -> 8 -> 16: d/dx 8x = 8
  else:
    grad(f)(2.)  # forward and reverse work
  # Dynamic-bound fori_loop is forward-only, like while_loop.
  if construct == "lax.fori_loop":
    dyn = lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, 1.0)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
      grad(lambda x: jit(dyn)(x, 3))(2.)
    _, t = xjax.jvp(lambda x: jit(dyn)(x, 3), (2.,), (1.,))
    assert float(t) == 12.0
