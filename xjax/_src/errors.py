"""JAX's error classes, with the same names, bases and messages.

Each message ends with a link to JAX's errors page, as JAX's do. The
concretization errors take the offending tracer and ask it for its
provenance (`Tracer._origin_msg`): the traced function and either the
arguments the value depends on or the operations that made it a tracer.
"""
from __future__ import annotations

_ERRORS_PAGE = "https://docs.jax.dev/en/latest/errors.html"


class _XJaxErrorMixin:
  """Appends the link to the class's entry on JAX's errors page."""

  def __init__(self, message: str):
    name = type(self).__name__
    super().__init__(f"{message}\nSee {_ERRORS_PAGE}#jax.errors.{name}")


class JAXTypeError(_XJaxErrorMixin, TypeError):
  """A TypeError raised by xjax (mirrors `jax.errors.JAXTypeError`)."""


class JAXIndexError(_XJaxErrorMixin, IndexError):
  """An IndexError raised by xjax (mirrors `jax.errors.JAXIndexError`)."""


class ConcretizationTypeError(JAXTypeError):
  """A traced (abstract) value was used where a concrete one is needed.

  Example::

    >>> import xjax
    >>> @xjax.jit
    ... def f(x):
    ...   return float(x)
    >>> f(1.0)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ConcretizationTypeError: Abstract tracer value encountered where concrete value is expected...

  Mark the argument static (``static_argnums``) or use `lax` control flow.
  """

  def __init__(self, tracer, context: str = ""):
    super().__init__(
        "Abstract tracer value encountered where concrete value is expected: "
        f"{tracer._error_repr()}\n{context}{tracer._origin_msg()}\n")


class NonConcreteBooleanIndexError(JAXIndexError):
  """A boolean mask whose values are not known while tracing was used as an index.

  Example::

    >>> import xjax, xjax.numpy as jnp
    >>> xjax.jit(lambda x: x[x > 0])(jnp.arange(3.0))  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    NonConcreteBooleanIndexError: Array boolean indices must be concrete; got bool[3]

  The result's shape would depend on the mask's values; use ``jnp.where``.
  """

  def __init__(self, tracer):
    super().__init__(f"Array boolean indices must be concrete; got {tracer}\n")


class TracerArrayConversionError(JAXTypeError):
  """A tracer was converted to a NumPy array (``np.asarray(tracer)``).

  Example::

    >>> import numpy as np, xjax
    >>> xjax.jit(lambda x: np.sin(x))(1.0)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    TracerArrayConversionError: The numpy.ndarray conversion method __array__() was called on traced array...

  Use `xjax.numpy` functions on traced values instead of NumPy's.
  """

  def __init__(self, tracer):
    super().__init__(
        "The numpy.ndarray conversion method __array__() was called on "
        f"{tracer._error_repr()}{tracer._origin_msg()}")


class TracerIntegerConversionError(JAXTypeError):
  """A tracer was used where Python needs an int (``__index__``).

  Example::

    >>> import xjax
    >>> xjax.jit(lambda x, i: x[:i])([1., 2.], 1)  # doctest: +SKIP

  Mark the integer argument static (``static_argnums``).
  """

  def __init__(self, tracer):
    super().__init__(
        f"The __index__() method was called on {tracer._error_repr()}"
        f"{tracer._origin_msg()}")


class TracerBoolConversionError(ConcretizationTypeError):
  """A tracer was converted to a Python bool, e.g. in ``if x > 0:``.

  Example::

    >>> import xjax
    >>> @xjax.jit
    ... def f(x, neg):
    ...   return -x if neg else x
    >>> f(1, True)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].

  Use `lax.cond` or `jnp.where`, or mark the argument static.
  """

  def __init__(self, tracer):
    JAXTypeError.__init__(
        self, f"Attempted boolean conversion of {tracer._error_repr()}."
        f"{tracer._origin_msg()}")


class UnexpectedTracerError(JAXTypeError):
  """A tracer escaped the transformation that created it (a leaked tracer).

  Example::

    >>> import xjax
    >>> saved = []
    >>> xjax.jit(lambda x: saved.append(x) or x)(1.0)
    Array(1., dtype=float32, weak_type=True)
    >>> saved[0] + 1  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    UnexpectedTracerError: Encountered an unexpected tracer...

  Return values from transformed functions instead of storing them in
  Python state.
  """

  def __init__(self, msg: str):
    super().__init__(msg)


class KeyReuseError(JAXTypeError):
  """A PRNG key was used twice while key-reuse checking is on."""

  def __init__(self, message: str):
    super().__init__(message)


class InconclusiveDimensionOperation(Exception):
  """An operation on symbolic dimensions whose result depends on their values.

  Mirrors `jax.errors.InconclusiveDimensionOperation`, which JAX raises under shape
  polymorphism (`jax.export` with symbolic shapes), e.g. when comparing ``a`` with ``b``
  for symbolic ``a`` and ``b``. xjax has no symbolic dimensions: every shape is concrete,
  so no xjax operation raises it; it exists so that code catching it runs unchanged.
  """
