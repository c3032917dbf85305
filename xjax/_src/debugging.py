"""Debugging from inside traced code: `jax.debug.callback`, `jax.debug.print`,
`jax.debug.log`, `jax.debug.breakpoint` and `jax.effects_barrier`.

`debug_callback` and `debug_print` are effectful primitives with no outputs.
Their effect (Debug, or OrderedDebug with ``ordered=True``) keeps them through
dead-code elimination and makes the compiled call wait for them; under `vmap`
they run once per element, under `jvp`/`grad` on the primal values only.
Printing goes to `sys.stdout` and is flushed at once, so no line is lost when
the program raises or exits.
"""
from __future__ import annotations

import cmd
import inspect
import logging
import string
import sys
import threading

import numpy as np

from xjax._src import core
from xjax._src import effects
from xjax._src import tree_util
from xjax._src.callback import as_arrays, io_callback
from xjax._src.lax.slicing import index_in_dim
from xjax._src.shape_dtype_struct import ShapeDtypeStruct

logger = logging.getLogger("xjax._src.debugging")


def _split_callback_args(args, kwargs):
  """Flattens (args, kwargs); leaves that are not arrays are kept aside as static."""
  flat, in_tree = tree_util.tree_flatten((args, kwargs))
  static, dynamic = {}, []
  for i, leaf in enumerate(flat):
    try:
      core.get_aval(leaf)
    except TypeError:
      static[i] = leaf
    else:
      dynamic.append(leaf)
  return in_tree, dynamic, static


def _merge_callback_args(in_tree, dynamic, static):
  static = dict(static)
  dyn = iter(dynamic)
  flat = [static[i] if i in static else next(dyn) for i in range(len(static) + len(dynamic))]
  return tree_util.tree_unflatten(in_tree, flat)


def _effect(ordered: bool):
  return effects.ordered_debug_effect if ordered else effects.debug_effect


def _check_options(name, args, kwargs):
  if args or kwargs:
    raise TypeError(f"{name} received unexpected arguments in the two-call form: "
                    f"args={args} kwargs={kwargs}")


# ----------------------------------------------------------------------------
# debug_callback


def debug_callback(callback=None, *args, ordered: bool = False, partitioned: bool = False,
                   **kwargs):
  """Calls `callback(*args, **kwargs)` for its side effect, from traced or compiled code.

  Array arguments reach the callback as Arrays; other leaves (strings, ...)
  pass through unchanged. The call is kept by jit, runs once per element
  under vmap and on primal values under differentiation; ``ordered=True``
  orders it with the other ordered effects. Two forms, as in JAX:
  ``debug.callback(f, x, ordered=True)`` and ``debug.callback(ordered=True)(f, x)``.

  Returns:
    None (the two-call form's first call returns the function to call).

  Raises:
    TypeError: `callback` is not callable; arguments given to the options call.

  Mirrors `jax.debug.callback`.
  """
  def _debug_callback(callback, *c_args, **c_kwargs):
    if not callable(callback):
      raise TypeError("first argument to jax.debug.callback must be callable, "
                      f"but got an object of type {type(callback)}")
    in_tree, dynamic, static = _split_callback_args(c_args, c_kwargs)

    def _flat_callback(*flat):
      cb_args, cb_kwargs = _merge_callback_args(in_tree, flat, static)
      callback(*cb_args, **cb_kwargs)
      return ()

    debug_callback_p.bind(*dynamic, callback=_flat_callback, effect=_effect(ordered),
                          partitioned=partitioned)

  if callback is not None:
    _debug_callback(callback, *args, **kwargs)
    return None
  _check_options("debug_callback", args, kwargs)
  return _debug_callback


debug_callback_p = core.Primitive("debug_callback", multiple_results=True)
debug_callback_p.effects = lambda *, effect, **_: frozenset({effect})


def _run_debug_callback(callback, flat):
  try:
    callback(*as_arrays(flat))
  except BaseException:
    logger.exception("jax.debug.callback failed")
    raise
  return ()


@debug_callback_p.def_impl
def _debug_callback_impl(*args, callback, effect, partitioned):
  return list(_run_debug_callback(callback, args))


@debug_callback_p.def_abstract_eval
def _debug_callback_abstract_eval(*avals, callback, effect, partitioned):
  return []


@debug_callback_p.def_lowering
def _debug_callback_lowering(ctx, *args, callback, effect, partitioned):
  return ctx.host_callback(lambda *xs: _run_debug_callback(callback, xs), args, [],
                           has_side_effect=True, ordered=effect.ordered)


def _debug_jvp(prim):
  def rule(primals, tangents, **params):
    prim.bind(*primals, **params)
    return [], []
  return rule


def _debug_transpose(cts, *args, **params):
  return [None] * len(args)


def _unrolled_batch(prim):
  """Binds `prim` once per element of the batch, as JAX's debugging batching rule does."""
  def rule(axis_data, args, dims, **params):
    for i in range(axis_data.size):
      prim.bind(*(x if d is None else index_in_dim(x, i, d, keepdims=False)
                  for x, d in zip(args, dims)), **params)
    return [], []
  return rule


debug_callback_p.def_jvp(_debug_jvp(debug_callback_p))
debug_callback_p.def_transpose(_debug_transpose)
debug_callback_p.def_batch(_unrolled_batch(debug_callback_p))


# ----------------------------------------------------------------------------
# debug_print


class _FormatChecker(string.Formatter):
  """Checks a format string's fields against the arguments without formatting them."""

  def format_field(self, value, format_spec):
    return ""

  def check_unused_args(self, used_args, args, kwargs):
    unused = [a for i, a in enumerate(args) if i not in used_args]
    if unused:
      raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused}")
    unused_kw = [k for k in kwargs if k not in used_args]
    if unused_kw:
      raise ValueError(
          f"Unused keyword arguments to `jax.debug.print`: {unused_kw}. You may be passing "
          "an f-string (i.e, `f\"{x}\"`) into `jax.debug.print` and instead should pass in "
          "a regular string.")


_format_checker = _FormatChecker()


def _has_placeholders(fmt: str) -> bool:
  if not fmt:
    return False
  _, field_name, *_ = next(iter(string.Formatter().parse(fmt)))
  return field_name is not None


def _format_and_emit(fmt, np_printoptions, has_placeholders, logging_record, *args, **kwargs):
  if has_placeholders:
    with np.printoptions(**np_printoptions):
      message = fmt.format(*args, **kwargs)
  else:
    message = " ".join((fmt, *(str(a) for a in args)))
  if logging_record is not None:
    record = logging.makeLogRecord(logging_record.__dict__)
    record.msg = message
    logger.handle(record)
  else:
    sys.stdout.write(message + "\n")
    sys.stdout.flush()


def debug_print(fmt: str | None = None, *args, ordered: bool = False,
                partitioned: bool = False, skip_format_check: bool = False,
                _use_logging: bool = False, **kwargs):
  """Prints `fmt.format(*args, **kwargs)` from traced or compiled code, at run time.

  The values are formatted when the program runs (so an f-string, formatted
  at trace time, prints tracers: pass the values as arguments instead), with
  the NumPy print options in force at the call. A format string without
  fields prints the arguments after it, separated by spaces. Two forms, as in
  JAX: ``debug.print("x={x}", x=x, ordered=True)`` and
  ``debug.print(ordered=True)("x={x}", x=x)``.

  Returns:
    None (the two-call form's first call returns the function to call).

  Raises:
    ValueError: arguments the format string does not use (unless
      `skip_format_check`); KeyError/IndexError: fields without arguments.

  Mirrors `jax.debug.print`.
  """
  def _debug_print(fmt: str, *c_args, **c_kwargs):
    if not skip_format_check:
      _format_checker.format(fmt, *c_args, **c_kwargs)
    in_tree, dynamic, static = _split_callback_args(c_args, c_kwargs)
    record = _logging_record() if _use_logging else None
    debug_print_p.bind(*dynamic, fmt=fmt, ordered=ordered, partitioned=partitioned,
                       in_tree=in_tree, static_args=tuple(static.items()),
                       np_printoptions=tuple(np.get_printoptions().items()),
                       has_placeholders=_has_placeholders(fmt), logging_record=record)

  if fmt is not None:
    _debug_print(fmt, *args, **kwargs)
    return None
  _check_options("debug_print", args, kwargs)
  return _debug_print


def debug_log(fmt: str | None = None, *args, ordered: bool = False,
              partitioned: bool = False, skip_format_check: bool = False, **kwargs):
  """`debug_print` to the `logging` module at INFO level, naming the caller's line.

  Mirrors `jax.debug.log`.
  """
  return debug_print(fmt, *args, ordered=ordered, partitioned=partitioned,
                     skip_format_check=skip_format_check, _use_logging=True, **kwargs)


def _logging_record():
  frame = inspect.currentframe()
  while frame is not None and frame.f_globals.get("__name__", "").startswith("xjax"):
    frame = frame.f_back
  path, line = (frame.f_code.co_filename, frame.f_lineno) if frame else ("(unknown file)", 0)
  return logger.makeRecord(logger.name, logging.INFO, path, line, "", (), None)


debug_print_p = core.Primitive("debug_print", multiple_results=True)
debug_print_p.effects = lambda *, ordered, **_: frozenset({_effect(ordered)})


def _print_callback(fmt, ordered, partitioned, in_tree, static_args, np_printoptions,
                    has_placeholders, logging_record):
  def callback(*flat):
    cb_args, cb_kwargs = _merge_callback_args(in_tree, flat, static_args)
    _format_and_emit(fmt, dict(np_printoptions), has_placeholders, logging_record,
                     *cb_args, **cb_kwargs)
  return callback


@debug_print_p.def_impl
def _debug_print_impl(*args, **params):
  return list(_run_debug_callback(_print_callback(**params), args))


@debug_print_p.def_abstract_eval
def _debug_print_abstract_eval(*avals, **params):
  return []


@debug_print_p.def_lowering
def _debug_print_lowering(ctx, *args, **params):
  callback = _print_callback(**params)
  return ctx.host_callback(lambda *xs: _run_debug_callback(callback, xs), args, [],
                           has_side_effect=True, ordered=params["ordered"])


debug_print_p.def_jvp(_debug_jvp(debug_print_p))
debug_print_p.def_transpose(_debug_transpose)
debug_print_p.def_batch(_unrolled_batch(debug_print_p))


# ----------------------------------------------------------------------------
# breakpoint

_breakpoint_lock = threading.Lock()


def breakpoint(*, backend: str | None = None, filter_frames: bool = True,  # noqa: A001
               num_frames: int | None = None, ordered: bool = False, token=None, **kwargs):
  """Stops at run time in Python's debugger (pdb), with the traced values in scope.

  The debugger shows the frames of the call site with the values of their
  array variables at run time. Without an interactive terminal (stdin not a
  tty) it prints the frames' values instead of waiting for commands. With
  `token` (a pytree of arrays) the breakpoint runs once those are computed
  and `token` is returned unchanged.

  Raises:
    ValueError: both `ordered` and `token`; a `backend` other than 'cli'.

  Mirrors `jax.debug.breakpoint`.
  """
  if token is not None and ordered:
    raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
  if backend not in (None, "cli"):
    raise ValueError(f"Unknown debugger backend {backend!r}: xjax has the 'cli' debugger.")
  frames = _caller_frames(filter_frames, num_frames)
  names = [list(values) for _, _, values in frames]
  flat_values = [v for _, _, values in frames for v in values.values()]

  def _breakpoint_callback(*flat):
    it = iter(flat)
    shown = [(where, code, {n: next(it) for n in frame_names})
             for (where, code, _), frame_names in zip(frames, names)]
    with _breakpoint_lock:
      _enter_debugger(shown)

  if token is None:
    debug_callback(_breakpoint_callback, *flat_values, ordered=ordered)
    return None
  leaves, tree = tree_util.tree_flatten(token)
  outs = debug_callback_with_result(_breakpoint_callback, flat_values, leaves)
  return tree_util.tree_unflatten(tree, outs)


def debug_callback_with_result(callback, values, passthrough):
  """Runs `callback(*values)` once `passthrough` is computed; returns `passthrough`."""
  def run(*xs):
    callback(*xs[:len(values)])
    return [np.asarray(x) for x in xs[len(values):]]
  shapes = [ShapeDtypeStruct(np.shape(x), np.result_type(x)) for x in passthrough]
  return io_callback(run, shapes, *values, *passthrough)


def _caller_frames(filter_frames, num_frames):
  """(file:line, source line, {name: array value}) for the user frames above the call."""
  frames = []
  frame = inspect.currentframe().f_back.f_back
  while frame is not None:
    internal = frame.f_globals.get("__name__", "").startswith("xjax")
    if not (filter_frames and internal):
      values = {}
      for name, value in frame.f_locals.items():
        try:
          core.get_aval(value)
        except TypeError:
          continue
        values[name] = value
      info = inspect.getframeinfo(frame, context=1)
      code = info.code_context[0].rstrip() if info.code_context else ""
      frames.append((f"{info.filename}:{info.lineno}", code, values))
    frame = frame.f_back
  return frames[:num_frames] if num_frames is not None else frames


def _enter_debugger(frames):
  out = sys.stdout
  stdin = sys.stdin
  if stdin is None or stdin.closed or not stdin.isatty():
    out.write("Entering jax.debug.breakpoint: no interactive terminal (stdin is not a "
              "tty), so the frames are printed instead of starting the debugger.\n")
    for where, code, values in frames:
      out.write(f"  at {where}: {code.strip()}\n")
      for name, value in values.items():
        out.write(f"    {name} = {value}\n")
    out.flush()
    return
  _CliDebugger(frames, stdin, out).cmdloop()


class _CliDebugger(cmd.Cmd):
  """JAX's command-line debugger: p/pp EXPR, u(p), d(own), w(here), l(ist), c(ontinue), q(uit).

  Any other line is evaluated as a Python expression in the current frame's
  values.
  """
  prompt = "(jdb) "

  def __init__(self, frames, stdin, stdout):
    super().__init__(stdin=stdin, stdout=stdout)
    self.use_rawinput = False
    self.frames = frames
    self.index = 0
    self.intro = f"Entering jdb:\n{self._where_line(0)}"

  def _where_line(self, i):
    where, code, _ = self.frames[i]
    return f"> {where}\n-> {code.strip()}"

  def _eval(self, expr):
    return eval(expr, {}, dict(self.frames[self.index][2]))  # noqa: S307 - the user's debugger

  def default(self, line):
    try:
      self.stdout.write(f"{self._eval(line)!r}\n")
    except Exception as e:  # the user's expression: report, stay in the debugger
      self.stdout.write(f"{type(e).__name__}: {e}\n")

  def do_p(self, arg):
    """p EXPR: prints the value of EXPR."""
    self.default(arg)

  def do_pp(self, arg):
    """pp EXPR: pretty-prints the value of EXPR."""
    import pprint
    try:
      self.stdout.write(pprint.pformat(self._eval(arg)) + "\n")
    except Exception as e:
      self.stdout.write(f"{type(e).__name__}: {e}\n")

  def do_up(self, _):
    """u(p): moves one frame up (towards the caller)."""
    if self.index + 1 >= len(self.frames):
      self.stdout.write("At topmost frame.\n")
    else:
      self.index += 1
      self.stdout.write(self._where_line(self.index) + "\n")

  def do_down(self, _):
    """d(own): moves one frame down."""
    if self.index == 0:
      self.stdout.write("At bottommost frame.\n")
    else:
      self.index -= 1
      self.stdout.write(self._where_line(self.index) + "\n")

  def do_where(self, _):
    """w(here): prints the frames."""
    for i in reversed(range(len(self.frames))):
      marker = "*" if i == self.index else " "
      self.stdout.write(f"{marker} {self._where_line(i)}\n")

  def do_list(self, _):
    """l(ist): prints the current line."""
    self.stdout.write(self._where_line(self.index) + "\n")

  def do_continue(self, _):
    """c(ontinue): leaves the debugger and runs on."""
    return True

  def do_quit(self, _):
    """q(uit): leaves the debugger and stops the program with an exception."""
    raise SystemExit("jax.debug.breakpoint: quit")

  def do_EOF(self, _):
    return True

  do_u, do_d, do_w, do_l, do_c, do_q = do_up, do_down, do_where, do_list, do_continue, do_quit
