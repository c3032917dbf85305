"""The ahead-of-time stages of a jitted function: `Traced`, `Lowered`, `Compiled`.

``jit(f).trace(*args)`` gives a `Traced` (the jaxpr), its ``.lower()`` a `Lowered` (the
StableHLO module), whose ``.compile()`` a `Compiled`, callable on arguments of the lowered
signature. Mirrors `jax.stages`; the base class and `ArgInfo` are in `stages.py`.
"""
from __future__ import annotations

from xjax._src import backend
from xjax._src import core
from xjax._src import dispatch
from xjax._src import monitoring
from xjax._src import stages
from xjax._src import tree_util
from xjax._src.jit_cache import _mark_donated
from xjax._src.sharding import spmd
from xjax._src.sharding.shardings import SingleDeviceSharding


class Traced(stages.Stage):
  """A function traced for one argument signature: the jaxpr, ready to lower.

  `jaxpr` is the ClosedJaxpr, `out_info` the output ShapeDtypeStructs, `args_info` the
  arguments' `ArgInfo`s; calling it evaluates the jaxpr; `lower()` gives the `Lowered`
  stage. Mirrors `jax.stages.Traced`.
  """

  def __init__(self, jitted, jaxpr, in_tree, out_tree, donate_mask, spmd_module=None):
    self._jitted = jitted
    self.jaxpr = jaxpr
    self.out_tree = out_tree
    self.args_info = stages.make_args_info(in_tree, jaxpr.in_avals, donate_mask)
    self._donate_mask = donate_mask
    self._spmd_module = spmd_module

  @property
  def fun_name(self) -> str:
    return self._jitted._name

  @property
  def out_avals(self):
    """The output avals, as a pytree of the output's structure."""
    return tree_util.tree_unflatten(self.out_tree, self.jaxpr.out_avals)

  @property
  def out_info(self):
    return _shape_dtype_structs(self.out_tree, self.jaxpr.out_avals)

  def __call__(self, *args, **kwargs):
    """Evaluates the traced jaxpr on arguments of the same structure (dynamic ones only).

    Raises:
      TypeError: the arguments' pytree structure differs from the traced one.
    """
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    if in_tree != self.in_tree:
      raise TypeError(f"Traced function called with input pytree {in_tree}, but it was "
                      f"traced for {self.in_tree}")
    return tree_util.tree_unflatten(self.out_tree, core.jaxpr_as_fun(self.jaxpr)(*leaves))

  def lower(self, *, lowering_platforms: tuple[str, ...] | None = None) -> Lowered:
    """Lowers to StableHLO, giving the `Lowered` stage.

    Raises:
      ValueError: `lowering_platforms` names a platform other than the one present.
    """
    if lowering_platforms is not None and tuple(lowering_platforms) != (backend.platform(),):
      raise ValueError(f"lowering_platforms={lowering_platforms!r}: xjax lowers only for the "
                       f"platform present, ({backend.platform()!r},)")
    name = f"jit({self._jitted._name})"
    with monitoring.timed_event(monitoring.JAXPR_TO_MLIR_MODULE_EVENT, name):
      text, callbacks = self._jitted._lower(self.jaxpr, self._donate_mask, self._spmd_module)
    return Lowered(self, text, callbacks)


class Lowered(stages.Stage):
  """A lowered jit computation: `as_text()` is its StableHLO, `compile()` compiles it.

  Mirrors `jax.stages.Lowered`.
  """

  def __init__(self, traced: Traced, text: str, host_callbacks=()):
    self._traced = traced
    self._text = text
    self._host_callbacks = host_callbacks
    self.args_info = traced.args_info
    self.out_tree = traced.out_tree

  @property
  def out_info(self):
    return self._traced.out_info

  def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
    """The module as text: StableHLO (default, or dialect='stablehlo') as MLIR prints it (the
    ops' custom assembly forms, as in JAX), or HLO (dialect='hlo').

    Raises:
      ValueError: an unknown dialect.
      NotImplementedError: debug_info=True (xjax's modules carry no source locations yet).
    """
    if debug_info:
      raise NotImplementedError("Lowered.as_text(debug_info=True) is not implemented in xjax "
                                "yet: its modules carry no source locations.")
    if dialect == "hlo":
      return backend.hlo_text(self._text)
    return backend.module_asm(self.compiler_ir(dialect))

  def compiler_ir(self, dialect: str | None = None):
    """The module: its StableHLO text (default, or dialect='stablehlo'), or for
    dialect='hlo' jaxlib's XlaComputation (``as_hlo_text()``, ...), as JAX gives.

    Raises:
      ValueError: an unknown dialect.
    """
    if dialect in (None, "stablehlo"):
      return self._text
    if dialect == "hlo":
      return backend.hlo_computation(self._text)
    raise ValueError(f"Unknown dialect {dialect!r}: use 'stablehlo' or 'hlo'.")

  def cost_analysis(self):
    """XLA's cost estimate of the unoptimized program (flops, bytes accessed, ...), or None
    where unavailable (JAX's analysis of the lowering; xjax compiles to get one)."""
    try:
      return self.compile().cost_analysis()
    except NotImplementedError:
      return None

  def compile(self, compiler_options: stages.CompilerOptions | None = None, *,
              device_assignment=None) -> Compiled:
    """Compiles the module with XLA, giving the `Compiled` stage.

    Args:
      compiler_options: XLA options (name -> value) added to the jit's own
        ``compiler_options`` (these win where both name one option).
      device_assignment: the devices to compile for: a tuple of one device (the jit's
        device or the default one if None).

    Raises:
      ValueError: a `device_assignment` of several devices for a one-device program.
    """
    options = self._traced._jitted._compiler_options
    if compiler_options:
      options = tuple(sorted({**dict(options), **dict(compiler_options)}.items()))
    name = f"jit({self._traced._jitted._name})"
    module = self._traced._spmd_module
    closed = self._traced.jaxpr
    if module is not None:
      exe = backend.compile_module(self._text, module.mesh._flat_devices_tuple,
                                   self._host_callbacks, compiler_options=options,
                                   fun_name=name)
      return Compiled(spmd.ShardedExecutable(exe, closed, module.mesh, self._text,
                                             len(closed.consts), closed.consts), self._traced)
    device = self._traced._jitted._device or dispatch.default_device()
    if device_assignment is not None:
      if len(device_assignment) != 1:
        raise ValueError(f"device_assignment={device_assignment!r}: this program runs on one "
                         f"device; pass a tuple of one device")
      device = device_assignment[0]
    exe = backend.compile_module(self._text, device, self._host_callbacks,
                                 compiler_options=options, fun_name=name)
    consts = [dispatch.to_buffer(c, device) for c in closed.consts]
    return Compiled(dispatch.Executable(exe, closed, device, consts, self._text),
                    self._traced)


class Compiled(stages.Stage):
  """A compiled jit computation, callable on arguments of the lowered signature.

  Mirrors `jax.stages.Compiled`.
  """

  def __init__(self, executable, traced: Traced):
    self._executable = executable
    self._traced = traced
    self.args_info = traced.args_info
    self.out_tree = traced.out_tree

  @property
  def out_info(self):
    return self._traced.out_info

  @property
  def input_shardings(self):
    """The sharding each argument is given, as a pytree of ``(args, kwargs)``. Mirrors
    `jax.stages.Compiled.input_shardings`."""
    exe = self._executable
    if isinstance(exe, spmd.ShardedExecutable):
      leaves = exe.in_shardings[exe._n_consts:]
    else:
      leaves = [SingleDeviceSharding(exe.device)] * len(self._traced.jaxpr.in_avals)
    return tree_util.tree_unflatten(self.in_tree, leaves)

  @property
  def output_shardings(self):
    """The sharding of each result, as a pytree of the outputs. Mirrors
    `jax.stages.Compiled.output_shardings`."""
    exe = self._executable
    if isinstance(exe, spmd.ShardedExecutable):
      leaves = exe.out_shardings
    else:
      leaves = [SingleDeviceSharding(exe.device)] * len(self._traced.jaxpr.out_avals)
    return tree_util.tree_unflatten(self.out_tree, leaves)

  def as_text(self) -> str:
    """The optimized HLO of the executable."""
    return self._executable.xla_executable.hlo_modules()[0].to_string()

  def cost_analysis(self):
    """XLA's cost estimate of the executable (a dict: flops, bytes accessed, ...)."""
    return self._executable.xla_executable.cost_analysis()

  def memory_analysis(self):
    """XLA's memory estimate of the executable (argument, output, temporary sizes in
    bytes, ...), or None where the backend gives none."""
    try:
      return self._executable.xla_executable.get_compiled_memory_stats()
    except (NotImplementedError, AttributeError):
      return None

  def runtime_executable(self):
    """The underlying XLA loaded executable (for debugging; no stable API)."""
    return self._executable.xla_executable

  def __call__(self, *args, **kwargs):
    jitted = self._traced._jitted
    dyn_args, dyn_kwargs, _ = jitted._split(args, kwargs)
    leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
    if in_tree != self.in_tree:
      raise TypeError(f"Function compiled with input pytree does not match the input "
                      f"pytree it was called with: expected {self.in_tree}, got {in_tree}")
    if any(isinstance(x, core.Tracer) for x in leaves):
      # A compiled executable has a fixed signature: transformations change it (JAX's).
      t = next(x for x in leaves if isinstance(x, core.Tracer))
      raise TypeError("Cannot apply JAX transformations to a function lowered and compiled for "
                      f"a particular signature. Detected argument of Tracer type {type(t)}.")
    avals = tuple(core.get_aval(x) for x in leaves)
    expected = tuple(self._traced.jaxpr.in_avals)
    _check_arg_types(self._traced.jaxpr, expected, avals)
    mask = self._traced._donate_mask
    if isinstance(self._executable, spmd.ShardedExecutable):
      outs = self._executable.run(leaves)
    else:
      device = self._executable.device
      outs = self._executable.run(
          [dispatch.to_buffer(x, device, donated=mask is not None and mask[i])
           for i, x in enumerate(leaves)], False)
    if mask is not None:
      _mark_donated(leaves, mask)
    return tree_util.tree_unflatten(self.out_tree, outs)


def _check_arg_types(jaxpr, expected, avals) -> None:
  """JAX's TypeError for a compiled executable called with other shapes or dtypes than it
  was compiled for: each mismatching argument named (the first five)."""
  info = getattr(jaxpr.jaxpr, "debug_info", None)
  names = list(getattr(info, "arg_names", None) or ())
  if len(names) != len(expected):
    names = [f"args[{i}]" for i in range(len(expected))]
  errors_ = [f"Argument '{n}' compiled with {e.str_short()} and called with {a.str_short()}"
             for n, e, a in zip(names, expected, avals)
             if (e.shape, e.dtype) != (a.shape, a.dtype)]
  if errors_:
    head = f"The first 5 of {len(errors_)}" if len(errors_) >= 5 else "The"
    raise TypeError(
        "Argument types differ from the types for which this computation was compiled. "
        "Perhaps you are calling the compiled executable with a different enable_x64 mode "
        f"than when it was AOT compiled? {head} mismatches are:\n" + "\n".join(errors_[:5]))


def _shape_dtype_structs(out_tree, avals):
  from xjax._src.shape_dtype_struct import ShapeDtypeStruct
  return tree_util.tree_unflatten(
      out_tree, [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type,
                                  sharding=getattr(a, "sharding", None)) for a in avals])
