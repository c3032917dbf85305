"""`jit`: trace once per signature, compile with XLA, cache, run.

The signature of a call is (treedef of the dynamic arguments, their avals
with weak types, the static arguments, the device, the config flags that
change programs). A miss traces the function to a jaxpr, lowers and compiles
it; a hit only flattens, looks up and executes: that is the hot path.

This module holds the call tiers of `PjitFunction`, fastest first: the
generated `_fast_call` (positional uncommitted Arrays of the last structure,
`jit_fast_path.py`), the `_CallMemo` of the last call's signature, then the
full path (split statics, flatten, key, look up or compile, execute). The
executable cache is `jit_cache.py`, the ahead-of-time stages `jit_stages.py`.

Under another transformation (grad, vmap, an enclosing jit), a call traces
the function to a closed jaxpr and binds `jit_p` (`jit_primitive.py`), so
outer interpreters see one higher-order equation.
"""
from __future__ import annotations

import functools
import operator
import warnings

import numpy as np

from xjax._src import compile_log
from xjax._src import core
from xjax._src import debug_nans
from xjax._src import dispatch
from xjax._src import jaxpr_keys
from xjax._src import monitoring
from xjax._src import traceback_util
from xjax._src import tree_util
from xjax._src.api_util import (arg_path_name, check_callable, debug_info, flatten_fun,
                                fun_name, fun_signature, resolve_argnums,
                                shaped_abstractify)
from xjax._src.array import Array
from xjax._src.config import config
from xjax._src.interpreters import discharge
from xjax._src.interpreters import lowering
from xjax._src.interpreters import partial_eval as pe
from xjax._src.jit_cache import CacheInfo, _CacheEntry, _caches_for, _lookup, _mark_donated
from xjax._src.jit_fast_path import _FAST_CALL_MAX_LEAVES, _MISS, _fast_call
from xjax._src.jit_primitive import _closed_over_refs_last, jit_p
from xjax._src.jit_stages import Lowered, Traced
from xjax._src.sharding import spmd
from xjax._src.sharding.mesh import get_concrete_mesh
from xjax._src.sharding.partition_spec import PartitionSpec
from xjax._src.sharding.shardings import NamedSharding, Sharding
from xjax._src.state import types as state_types
from xjax._src import backend

_backend = backend  # `jit` has an argument of that name


class _CallMemo:
  """The signature of the last call that looked up its entry (`_ExecutableCache.memo`),
  which `PjitFunction._call`'s first two tiers match to run that entry again.

  A call of the same flags, tree node, statics and leaves' avals (by identity) reuses
  `entry` without building and hashing a key. A `simple` memo also serves a call from its
  arguments alone, before statics are split and leaves flattened: each argument must be an
  uncommitted Array of the remembered aval on `device`, or the remembered Python scalar.
  Attributes are read by name (a slot read costs what a tuple index does).
  """
  __slots__ = ("avals", "device", "flags_key", "entry", "root", "committed", "simple",
               "statics", "kwargs", "scalars")

  def __init__(self, avals, device, flags_key, entry, root, committed, simple, statics,
               kwargs, scalars):
    # The leaves' avals, a tuple in flattening order: matched by identity, one C call for
    # all (avals are interned: equal avals are one object; an aval that is not, such as a
    # subclass's, only costs the keyed lookup).
    self.avals = avals
    # The device the entry runs on. A simple memo's arguments were uncommitted, so it was
    # the default device then and must be now (`jax.default_device` is no trace context:
    # the flags key does not show it).
    self.device = device
    # `config.dispatch_state()`'s interned key of the flags that change programs, matched
    # by identity: a flag flipped since means another program (the cache key holds it).
    self.flags_key = flags_key
    # The `_CacheEntry` the call ran: what a matching call runs.
    self.entry = entry
    # The bare tree node of (dynamic args, dynamic kwargs), matched by `==` (at C speed):
    # the argument structure is part of the cache key.
    self.root = root
    # Whether the arguments were committed to `device` (outputs are committed likewise):
    # only a call of the same commitment matches.
    self.committed = committed
    # Whether the call had only positional uncommitted Arrays and matchable Python scalars
    # (`_memo_scalar`), keyword arguments of plain values (`_PLAIN_TYPES`: statics or None),
    # no donation and no NaN checks: then the first tier matches `args` directly.
    self.simple = simple
    # The static arguments, (position or name, type, value) triples (`_split`): part of
    # the cache key, compared with `_same_statics`.
    self.statics = statics
    # A copy of the keyword arguments (None without any): the first tier compares them by
    # type and value (`_same_plain_kwargs`), as it neither splits nor flattens them.
    self.kwargs = kwargs
    # A simple memo's per positional argument: None for an Array, else the scalar's (type,
    # value, buffer), so the same scalar again reuses its buffer; () when not simple.
    self.scalars = scalars


def _function_name(fun) -> str:
  """`fun`'s ``__name__``, looking through functools.partial layers that have none."""
  while not hasattr(fun, "__name__") and isinstance(fun, functools.partial):
    fun = fun.func
  return getattr(fun, "__name__", type(fun).__name__)


class PjitFunction:
  """A function compiled with XLA on first call for each argument signature.

  Returned by `xjax.jit` (JAX's type of the same name: libraries recognize jitted
  functions by it); call it like the function it wraps. `lower(*args)` gives the
  StableHLO text, `trace(*args)` the jaxpr.

  Its own state lives in slots, so `functools.wraps(jitted)(g)` (which every
  transformation does) copies only the wrapped function's attributes
  (`__name__`, `__doc__`, `__wrapped__`, ...) onto `g`, never this object's
  function or caches, which a later `jit(g)` would pick up (issue 12).
  """
  __slots__ = ("_fun", "_sig", "_static_argnums", "_static_argnames", "_donate_argnums",
               "_donate_argnames", "_inline", "_keep_unused", "_device", "_name",
               "_has_statics", "_inline_fast", "_cache", "_jaxpr_cache", "_converted",
               "_compiler_options", "_in_shardings", "_out_shardings", "_sharded",
               "_first_static_num", "_negative_static_nums",
               "__dict__", "__weakref__")

  def __init__(self, fun, static_argnums, static_argnames, donate_argnums,
               donate_argnames, inline, keep_unused, device, compiler_options=(),
               in_shardings=None, out_shardings=None):
    check_callable(fun)
    functools.update_wrapper(self, fun)
    self._fun = fun
    self._sig = sig = fun_signature(fun)
    (self._donate_argnums, self._donate_argnames, self._static_argnums,
     self._static_argnames) = resolve_argnums(fun, sig, donate_argnums, donate_argnames,
                                              static_argnums, static_argnames)
    overlap = set(self._static_argnums) & set(self._donate_argnums)
    if overlap:
      raise ValueError(f"static_argnums and donate_argnums cannot intersect: {sorted(overlap)}")
    self._inline = inline
    self._keep_unused = keep_unused
    self._device = device
    self._compiler_options = compiler_options
    self._in_shardings = in_shardings
    self._out_shardings = out_shardings
    # A pytree of Nones (flax's nnx.jit passes such trees) names no sharding: unsharded.
    self._sharded = _names_a_sharding(in_shardings) or _names_a_sharding(out_shardings)
    self._name = fun_name(fun)
    self._has_statics = bool(self._static_argnums or self._static_argnames)
    self._first_static_num = min((i for i in self._static_argnums if i >= 0), default=0)
    self._negative_static_nums = any(i < 0 for i in self._static_argnums)
    self._inline_fast = inline and not self._has_statics
    # As in JAX, caches belong to the function (and options), not to this
    # wrapper: `jit(f)(x)` twice with new wrappers traces once.
    options = (self._static_argnums, self._static_argnames, self._donate_argnums,
               self._donate_argnames, inline, keep_unused, device, compiler_options,
               _hashable_tree(in_shardings), _hashable_tree(out_shardings))
    self._cache, self._jaxpr_cache, self._converted = _caches_for(fun, options)

  def __get__(self, obj, objtype=None):
    if obj is None:
      return self
    return functools.partial(self, obj)

  def __repr__(self):
    try:  # JAX's repr (chex.is_traceable reads it); bare when the function's repr fails
      return f"<PjitFunction of {self.__wrapped__!r}>"
    except Exception:
      return "<PjitFunction>"

  def __getstate__(self):
    """The function and options, with JAX's ``function_name`` (the wrapped function's name,
    through unnamed functools.partial layers): what pickling keeps (not the caches)."""
    return {"fun": self._fun, "function_name": _function_name(self._fun),
            "options": (self._static_argnums, self._static_argnames, self._donate_argnums,
                        self._donate_argnames, self._inline, self._keep_unused, self._device,
                        self._compiler_options, self._in_shardings, self._out_shardings)}

  def __setstate__(self, state):
    self.__init__(state["fun"], *state["options"])

  @property
  def __signature__(self):
    """The wrapped function's signature, as JAX's jitted functions give it to
    `inspect.signature` (with or without follow_wrapped; this object's `__get__` would
    otherwise make inspect take it for a builtin without one); None where the function
    has none (inspect then raises its ValueError)."""
    return self._sig

  # -- splitting static and dynamic arguments --------------------------------

  def _split(self, args, kwargs):
    """(dynamic args, dynamic kwargs, statics); statics are (position or name, type, value)
    triples: the type is part of the cache key, so `f(2)` and `f(2.0)` (equal, same
    hash) or `True` and `1` do not share an executable (issue 12). Unhashable statics
    raise when the key is looked up (`_lookup`)."""
    statics = []
    n = len(args)
    static_nums = self._static_argnums
    # Positional statics only when some static position is among the arguments (jnp's
    # functions pass theirs by keyword: the common case skips this).
    if static_nums and (n > self._first_static_num or self._negative_static_nums):
      nums = {i if i >= 0 else i + n for i in static_nums}
      dyn_args = tuple(a for i, a in enumerate(args) if i not in nums)
      statics.extend((i, type(args[i]), args[i]) for i in sorted(nums) if i < n)
    else:
      dyn_args = args
    names = self._static_argnames
    if names and kwargs:
      dyn_kwargs = {}
      named = []
      for k, v in kwargs.items():
        if k in names:
          named.append((k, type(v), v))
        else:
          dyn_kwargs[k] = v
      if len(named) > 1:
        named.sort(key=_static_name)
      statics.extend(named)
    else:
      dyn_kwargs = kwargs
    return dyn_args, dyn_kwargs, tuple(statics)

  def _rebuild(self, statics, dyn_args, dyn_kwargs):
    """The full (args, kwargs) from the dynamic ones and the static values."""
    args = list(dyn_args)
    kwargs = dict(dyn_kwargs)
    for key, _, value in statics:
      if isinstance(key, int):
        args.insert(key, value)
      else:
        kwargs[key] = value
    return args, kwargs

  def _donate_mask(self, dyn_args, dyn_kwargs, n_leaves):
    if not self._donate_argnums and not self._donate_argnames:
      return None
    static = set(self._static_argnums)
    mask = []
    pos = 0
    for i in range(len(dyn_args) + len(static)):
      if i in static:
        continue
      if pos >= len(dyn_args):
        break
      count = len(tree_util.tree_leaves(dyn_args[pos]))
      mask.extend([i in self._donate_argnums] * count)
      pos += 1
    for k in sorted(dyn_kwargs):
      count = len(tree_util.tree_leaves(dyn_kwargs[k]))
      mask.extend([k in self._donate_argnames] * count)
    assert len(mask) == n_leaves, "internal: donation mask length"
    return tuple(mask)

  # -- tracing ----------------------------------------------------------------

  def _trace(self, statics, dyn_args, dyn_kwargs, leaves, in_tree, avals, traced_for="jit"):
    key = (in_tree, avals, statics, core.trace_context())
    hit = _lookup(self._jaxpr_cache, key, statics)
    if hit is not None:
      return hit
    fun = self._fun

    def with_statics(*args, **kwargs):
      args, kwargs = self._rebuild(statics, args, kwargs)
      return fun(*args, **kwargs)

    flat_fun, out_tree = flatten_fun(with_statics, in_tree)
    full_args, full_kwargs = self._rebuild(statics, dyn_args, dyn_kwargs)
    info = debug_info(traced_for, fun, full_args, full_kwargs,
                      self._static_argnums, self._static_argnames, self._sig)
    if config.jax_no_tracing:
      raise RuntimeError(f"re-tracing function {info.func_src_info} for `jit`, but "
                         "'no_tracing' is set")
    if config.jax_explain_cache_misses:
      pe.explain_cache_miss(fun, self._jaxpr_cache.keys(), key, info)
    if core.trace_ctx.trace is core.eval_trace:  # as JAX: a top-level trace is timed
      with monitoring.timed_event(monitoring.JAXPR_TRACE_EVENT, self._name), \
           compile_log.log_elapsed("Finished tracing {fun_name} for jit in "
                                   "{elapsed_time:.9f} sec", self._name):
        closed = pe.trace_to_jaxpr(flat_fun, avals, info)
    else:
      closed = pe.trace_to_jaxpr(flat_fun, avals, info)
    result = (closed, out_tree.val)
    # A jaxpr closing over an enclosing trace's tracers is valid only in that trace.
    if not any(isinstance(c, core.Tracer) for c in closed.consts):
      self._jaxpr_cache.put(key, result)
    return result

  def _signature(self, leaves, dyn_args, dyn_kwargs):
    """(avals, device, committed, buffers) of any arguments: host values are transferred."""
    avals = self._avals(leaves, dyn_args, dyn_kwargs)
    device, committed = dispatch.pick_device(leaves, self._name)
    if self._device is not None:
      device, committed = self._device, True
    if device is dispatch.SPMD:
      return avals, device, committed, None
    return avals, device, committed, [dispatch.to_buffer(x, device, a)
                                      for x, a in zip(leaves, avals)]

  def _avals(self, leaves, dyn_args, dyn_kwargs):
    try:
      return tuple(x.aval if type(x) is Array else core.get_aval(x) for x in leaves)
    except (TypeError, OverflowError):
      self._raise_bad_argument(leaves, dyn_args, dyn_kwargs)

  def _raise_bad_argument(self, leaves, dyn_args, dyn_kwargs):
    """Raises JAX's TypeError naming the argument that is not an array type (or its
    OverflowError naming one too large for its type)."""
    paths = [tree_util.keystr(p) for p, _ in
             tree_util.tree_flatten_with_path((dyn_args, dyn_kwargs))[0]]
    for x, path in zip(leaves, paths):
      if isinstance(x, core.Tracer):
        continue
      try:
        core.get_aval(x)
      except TypeError:
        pass  # shaped_abstractify below raises JAX's message
      except OverflowError:
        raise OverflowError(
            "An overflow was encountered while parsing an argument to a jitted computation, "
            f"whose argument path is {arg_path_name(self._sig, path)}. Got {type(x)} with "
            f"value {x}") from None
      shaped_abstractify(x, self._fun, arg_path_name(self._sig, path))
    raise AssertionError("internal: unreachable")

  # -- calling ----------------------------------------------------------------

  def __call__(self, *args, **kwargs):
    # The hot path (measured: bench/workloads.py, "jit dispatch"). Kept to a few lines: a
    # Python frame costs in proportion to its function's locals.
    fast_call = self._cache.fast_call
    if fast_call is not None and not kwargs:
      outs = fast_call(args)
      if outs is not _MISS:
        return outs
    return self._call(args, kwargs)

  def _call(self, args, kwargs):
    # Flatten, key, look up, execute.
    try:
      disabled, check_nans, flags_key = config.dispatch_state()
      memo = self._cache.memo
      # The memo's arguments are uncommitted, so it also needs the same default device
      # (`jax.default_device` is no trace context: the flags key does not show it).
      if (not disabled and memo is not None and memo.simple and memo.flags_key is flags_key
          and len(args) == len(memo.avals) and core.trace_ctx.trace is core.eval_trace
          and memo.device is dispatch.default_device()
          and (memo.kwargs is None if not kwargs else
               memo.kwargs is not None and _same_plain_kwargs(kwargs, memo.kwargs))):
        # The fastest path: the same signature as the last call (see _CallMemo).
        device = memo.device
        buffers = []
        for x, aval, scalar in zip(args, memo.avals, memo.scalars):
          if type(x) is Array:
            if x.aval is not aval or x._committed or x._device is not device:
              break
            buffers.append(x._buf)
          elif scalar is not None and type(x) is scalar[0] and x == scalar[1]:
            buffers.append(scalar[2])  # the same Python scalar: its buffer again
          else:
            break
        else:
          self._cache.hits += 1
          return memo.entry.run_uncommitted(buffers)
      if disabled or (self._inline_fast and core.trace_ctx.trace is not core.eval_trace):
        # Inlined under a trace: the function's equations join the enclosing jaxpr.
        return self._fun(*args, **kwargs)
      if self._has_statics:
        dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
      else:
        dyn_args, dyn_kwargs, statics = args, kwargs, ()
      leaves = []
      root = tree_util.flatten_call_args(dyn_args, dyn_kwargs, leaves)
      if core.trace_ctx.trace is not core.eval_trace:
        in_tree = tree_util.PyTreeDef(root, len(leaves))
        return self._bind(statics, dyn_args, dyn_kwargs, leaves, in_tree)
      if self._sharded:
        return self._call_spmd(statics, dyn_args, dyn_kwargs, leaves, root, flags_key)
      if self._device is None:
        # The common case in one loop: uncommitted Arrays on the default device.
        device, committed = dispatch.default_device(), False
        avals, buffers = [], []
        for x in leaves:
          if type(x) is not Array or x._committed or x._device is not device:
            avals, device, committed, buffers = self._signature(leaves, dyn_args, dyn_kwargs)
            break
          avals.append(x.aval)
          buffers.append(x._buf)
      else:
        avals, device, committed, buffers = self._signature(leaves, dyn_args, dyn_kwargs)
      if device is dispatch.SPMD:
        return self._call_spmd(statics, dyn_args, dyn_kwargs, leaves, root, flags_key)
      avals = tuple(avals)
      cache = self._cache
      if (memo is not None and memo.flags_key is flags_key and memo.device is device
          and memo.committed is committed and len(avals) == len(memo.avals)
          and all(map(operator.is_, avals, memo.avals)) and root == memo.root
          and _same_statics(statics, memo.statics)):
        # The last call's signature again (any pytree): no key to hash (hashing each aval
        # is a Python call; comparing by identity is not).
        entry = memo.entry
        cache.hits += 1
      else:
        # The bare tree node, not a PyTreeDef: tuples hash and compare at C speed.
        entry = cache.lookup((root, avals, statics, device, flags_key), statics, lambda: (
            self._compile(statics, dyn_args, dyn_kwargs, leaves,
                          tree_util.PyTreeDef(root, len(leaves)), avals, device)))
        cache.fast_call = None
        if entry.by_leaves:
          cache.memo = None
        else:
          # `simple`: positional uncommitted Arrays (and keyword arguments that are plain
          # values: statics, or None), which the first check above serves without splitting
          # or flattening (a donating entry goes the long way, which deletes donations).
          simple = (not committed and len(leaves) == len(args) and not check_nans
                    and entry.donate_mask is None
                    and all(type(x) is Array or _memo_scalar(x) for x in args)
                    and all(type(v) in _PLAIN_TYPES for v in kwargs.values()))
          scalars = tuple(None if type(x) is Array else (type(x), x, b)
                          for x, b in zip(args, buffers)) if simple else ()
          cache.memo = _CallMemo(avals, device, flags_key, entry, root, committed, simple,
                                 statics, dict(kwargs) if kwargs else None, scalars)
          if (not kwargs and not committed and not self._has_statics and not check_nans
              and entry.donate_mask is None and 0 < len(leaves) <= _FAST_CALL_MAX_LEAVES
              and all(type(x) is Array for x in leaves)):
            # Positional Array arguments in tuples, lists and dicts: `_fast_call`.
            cache.fast_call = _fast_call(cache, entry, root[2][0], avals, device)
      if entry.donate_mask is not None and not entry.by_leaves:
        buffers = _owned_buffers(leaves, buffers, entry.donate_mask, device)
      outs = (entry.executable.run(leaves) if entry.by_leaves
              else entry.executable.run(buffers, committed))
      if entry.donate_mask is not None:
        _mark_donated(leaves, entry.donate_mask)
      if check_nans:
        # Donated arguments are gone: no de-optimized re-run then.
        debug_nans.check_jit(self._name, outs,
                             entry.jaxpr if entry.donate_mask is None else None, leaves)
      return entry.out_tree.unflatten(outs)
    except Exception as e:  # free when nothing is raised
      traceback_util.filter_traceback(e)
      raise

  # -- over several devices ---------------------------------------------------

  def _call_spmd(self, statics, dyn_args, dyn_kwargs, leaves, root, flags_key):
    """A call whose arguments or shardings span several devices: one SPMD program."""
    avals = self._avals(leaves, dyn_args, dyn_kwargs)
    in_shardings = self._leaf_in_shardings(dyn_args, dyn_kwargs, leaves)
    key = ("spmd", root, avals, statics, in_shardings, flags_key)
    entry = self._cache.lookup(key, statics, lambda: self._compile_spmd(
        statics, dyn_args, dyn_kwargs, leaves, tree_util.PyTreeDef(root, len(leaves)), avals,
        in_shardings))
    outs = entry.executable.run(leaves)
    if entry.donate_mask is not None:
      _mark_donated(leaves, entry.donate_mask)
    return entry.out_tree.unflatten(outs)

  def _leaf_in_shardings(self, dyn_args, dyn_kwargs, leaves) -> tuple:
    """Per argument leaf: jit's in_sharding for it, else the sharding it is committed to,
    else None (XLA chooses).

    Raises:
      ValueError: JAX's errors for in_shardings that are not a prefix of the positional
        arguments, for kwargs with in_shardings, and for a committed argument whose
        sharding differs from its in_sharding.
    """
    own = spmd.in_shardings_of(leaves, self._name)
    if self._in_shardings is None:
      return tuple(own)
    if dyn_kwargs:
      raise ValueError("pjit does not support kwargs when in_shardings is specified.")
    spec = _resolve_specs(self._in_shardings, "in_shardings")
    if isinstance(spec, tuple) and not isinstance(spec, PartitionSpec) and len(spec) != len(
        dyn_args):
      raise ValueError(
          "pjit in_shardings specification must be a tree prefix of the positional arguments "
          "tuple. In particular, pjit in_shardings must either be a Sharding, a PartitionSpec, "
          f"or a tuple of length equal to the number of positional arguments. But pjit "
          f"in_shardings is the wrong length: got a tuple or list of length {len(spec)} for an "
          f"args tuple of length {len(dyn_args)}.")
    try:
      per_leaf = tree_util.broadcast_prefix(spec, tuple(dyn_args), is_leaf=_is_sharding_leaf)
    except ValueError as e:
      raise ValueError(f"pjit in_shardings specification must be a tree prefix of the "
                       f"positional arguments tuple: {e}") from None
    out = []
    for x, want, have in zip(leaves, per_leaf, own):
      if want is None:
        out.append(have)
        continue
      aval = x.aval if type(x) is Array else core.get_aval(x)
      want.check_shape(aval.shape)
      if have is not None and not have.is_equivalent_to(want, len(aval.shape)):
        raise ValueError(
            "Sharding passed to jit does not match the sharding on the respective arg. Got "
            f"jit sharding: {want!r},\narg sharding: {have!r} for arg type: {aval.str_short()}")
      out.append(want)
    return tuple(out)

  def _leaf_out_shardings(self, out_tree, out_avals) -> list:
    if self._out_shardings is None:
      return [None] * len(out_avals)
    spec = _resolve_specs(self._out_shardings, "out_shardings")
    shaped = tree_util.tree_unflatten(out_tree, [0] * len(out_avals))
    try:
      per_leaf = tree_util.broadcast_prefix(spec, shaped, is_leaf=_is_sharding_leaf)
    except ValueError as e:
      raise ValueError(f"pjit out_shardings specification must be a tree prefix of the "
                       f"corresponding value: {e}") from None
    for s, a in zip(per_leaf, out_avals):
      if s is not None:
        s.check_shape(a.shape)
    return list(per_leaf)

  def _spmd_module(self, closed, out_tree, leaves, in_shardings, donate_mask):
    out_shardings = self._leaf_out_shardings(out_tree, closed.out_avals)
    mesh = spmd.mesh_of(leaves, self._name, [*in_shardings, *out_shardings])
    if mesh is None:
      mesh = spmd.program_mesh(closed.jaxpr) or get_concrete_mesh()
    if mesh is None:
      raise ValueError(f"jit of {self._name}: shardings over several devices need a mesh")
    n_consts = len(closed.consts)
    aliases = None
    if donate_mask is not None:
      aliases = {n_consts + i: j
                 for i, j in _donation_aliases(closed, donate_mask, warn=True).items()}
    return lowering.SpmdModule(mesh, [None] * n_consts + list(in_shardings), out_shardings,
                               aliases)

  def _compile_spmd(self, statics, dyn_args, dyn_kwargs, leaves, in_tree, avals, in_shardings):
    closed, out_tree = self._trace(statics, dyn_args, dyn_kwargs, leaves, in_tree, avals)
    if state_types.takes_refs(closed):
      raise NotImplementedError("jit of a function taking refs over several devices")
    donate_mask = self._donate_mask(dyn_args, dyn_kwargs, len(leaves))
    module = self._spmd_module(closed, out_tree, leaves, in_shardings, donate_mask)
    fun_name = f"jit({self._name})"
    with monitoring.timed_event(monitoring.JAXPR_TO_MLIR_MODULE_EVENT, fun_name):
      text, callbacks = lowering.lower_jaxpr_to_module(closed, f"jit_{self._name}", spmd=module)
    compile_log.log_compile(self._name, avals)
    exe = backend.compile_module(text, module.mesh._flat_devices_tuple, callbacks,
                                 compiler_options=self._compiler_options, fun_name=fun_name)
    executable = spmd.ShardedExecutable(exe, closed, module.mesh, text, len(closed.consts),
                                        closed.consts)
    return _CacheEntry(executable, out_tree, donate_mask, closed)

  def _compile(self, statics, dyn_args, dyn_kwargs, leaves, in_tree, avals, device):
    closed, out_tree = self._trace(statics, dyn_args, dyn_kwargs, leaves, in_tree, avals)
    if spmd.program_mesh(closed.jaxpr) is not None:
      # The function itself shards (with_sharding_constraint, shard_map): one SPMD program.
      entry = self._compile_spmd(statics, dyn_args, dyn_kwargs, leaves, in_tree, avals,
                                 tuple(spmd.arg_sharding(x) for x in leaves))
      entry.by_leaves = True
      return entry
    if state_types.takes_refs(closed):
      return self._compile_with_refs(closed, out_tree, leaves, device)
    donate_mask = self._donate_mask(dyn_args, dyn_kwargs, len(leaves))
    if donate_mask is not None:  # this function's compilation, even if the executable is shared
      _donation_aliases(closed, donate_mask, warn=True)

    def build():
      fun_name = f"jit({self._name})"
      with monitoring.timed_event(monitoring.JAXPR_TO_MLIR_MODULE_EVENT, fun_name), \
           compile_log.log_elapsed("Finished jaxpr to MLIR module conversion {fun_name} in "
                                   "{elapsed_time:.9f} sec", fun_name):
        text, callbacks = self._lower(closed, donate_mask)
      compile_log.log_compile(self._name, avals)
      with compile_log.log_elapsed("Finished XLA compilation of {fun_name} in "
                                   "{elapsed_time:.9f} sec", fun_name):
        exe = backend.compile_module(text, device, callbacks,
                                     compiler_options=self._compiler_options,
                                     fun_name=fun_name)
      consts = [dispatch.to_buffer(c, device) for c in closed.consts]
      return dispatch.Executable(exe, closed, device, consts, text)
    # Keyed by what the jaxpr computes: `jit(lambda ...)` made anew in a loop traces each
    # time but compiles once (JAX compiles each time).
    key = ("jitted", self._name, jaxpr_keys.structure_key(closed), device, donate_mask,
           self._compiler_options, config.values_key())
    return _CacheEntry(dispatch.cached_executable(key, build), out_tree, donate_mask, closed)

  def _compile_with_refs(self, closed, out_tree, leaves, device):
    """A function taking (or closing over) refs: checked, discharged, compiled; the
    executable writes the refs' final values back into them after each call."""
    discharge.check_jit_refs(closed, leaves)

    def compile_fn(functional):
      fun_name = f"jit({self._name})"
      with monitoring.timed_event(monitoring.JAXPR_TO_MLIR_MODULE_EVENT, fun_name):
        text, callbacks = self._lower(functional, None)
      exe = backend.compile_module(text, device, callbacks,
                                   compiler_options=self._compiler_options, fun_name=fun_name)
      consts = [dispatch.to_buffer(c, device) for c in functional.consts]
      return dispatch.Executable(exe, functional, device, consts, text)
    return _CacheEntry(dispatch.compile_with_refs(closed, compile_fn), out_tree, None, closed)

  def _lower(self, closed, donate_mask, spmd_module=None) -> tuple[str, list]:
    """The module text and its host callbacks. The jaxpr is pruned first, as JAX's lowering
    prunes it (every input kept): an equation's dead-code-elimination rule may rewrite it
    (custom_vjp's ``optimize_remat`` fwd becomes the primal function where its residuals go
    unused)."""
    closed = pe.dce_closed_jaxpr(closed, [True] * len(closed.jaxpr.outvars),
                                 instantiate=True)[0]
    if spmd_module is not None:
      return lowering.lower_jaxpr_to_module(closed, f"jit_{self._name}", spmd=spmd_module)
    aliases = None
    if donate_mask is not None:
      n_consts = len(closed.consts)
      aliases = {n_consts + i: j for i, j in _donation_aliases(closed, donate_mask).items()}
    return lowering.lower_jaxpr_to_module(closed, f"jit_{self._name}", aliases=aliases)

  def _bind(self, statics, dyn_args, dyn_kwargs, leaves, in_tree):
    if self._inline:
      # Inlined: the function's equations join the enclosing jaxpr directly.
      args, kwargs = self._rebuild(statics, dyn_args, dyn_kwargs)
      return self._fun(*args, **kwargs)
    avals = tuple(core.get_aval(x) for x in leaves)
    closed, out_tree = self._trace(statics, dyn_args, dyn_kwargs, leaves, in_tree, avals)
    converted = self._converted.get(closed)
    if converted is None:
      converted = pe.convert_constvars_jaxpr(closed)
      if not closed.consts:
        self._converted[closed] = converted
    jaxpr, consts = converted
    args = [*consts, *leaves]
    if any(state_types.is_ref_aval(v.aval) for v in closed.jaxpr.constvars):
      jaxpr, args = _closed_over_refs_last(jaxpr, len(consts), args)
    n = len(args)
    outs = jit_p.bind(*args, jaxpr=jaxpr, name=self._name,
                      donated_invars=(False,) * n, inline=self._inline,
                      keep_unused=self._keep_unused)
    return tree_util.tree_unflatten(out_tree, outs)

  # -- ahead-of-time ----------------------------------------------------------

  @traceback_util.api_boundary
  def trace(self, *args, **kwargs) -> Traced:
    """Traces for these arguments; `.jaxpr` is the ClosedJaxpr (mirrors `jax.jit(f).trace`)."""
    dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
    leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
    avals = self._avals(leaves, dyn_args, dyn_kwargs)
    closed, out_tree = self._trace(statics, dyn_args, dyn_kwargs, leaves, in_tree, avals)
    donate_mask = self._donate_mask(dyn_args, dyn_kwargs, len(leaves))
    module = None
    if (self._sharded or any(spmd.arg_sharding(x) is not None for x in leaves)
        or spmd.program_mesh(closed.jaxpr) is not None):
      in_shardings = self._leaf_in_shardings(dyn_args, dyn_kwargs, leaves)
      module = self._spmd_module(closed, out_tree, leaves, in_shardings, donate_mask)
    return Traced(self, closed, in_tree, out_tree, donate_mask, module)

  @traceback_util.api_boundary
  def lower(self, *args, **kwargs) -> Lowered:
    """Lowers for these arguments to StableHLO (mirrors `jax.jit(f).lower`)."""
    return self.trace(*args, **kwargs).lower()

  def eval_shape(self, *args, **kwargs):
    """The outputs' ShapeDtypeStructs for these arguments (traced, not compiled), each with
    its out_shardings entry where one is given (mirrors `jax.jit(f).eval_shape`)."""
    from xjax._src.shape_dtype_struct import ShapeDtypeStruct
    dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
    leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
    avals = self._avals(leaves, dyn_args, dyn_kwargs)
    closed, out_tree = self._trace(statics, dyn_args, dyn_kwargs, leaves, in_tree, avals)
    out_avals = closed.out_avals
    shardings = [s if isinstance(s, Sharding) else getattr(a, "sharding", None)
                 for s, a in zip(self._leaf_out_shardings(out_tree, out_avals), out_avals)]
    return tree_util.tree_unflatten(out_tree, [
        ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type, sharding=s)
        for a, s in zip(out_avals, shardings)])

  def clear_cache(self):
    self._cache.clear()
    self._jaxpr_cache.clear()

  def _cache_size(self) -> int:
    """The number of compiled signatures held (mirrors JAX's private method of that name)."""
    return len(self._cache)

  def cache_info(self) -> CacheInfo:
    """Hits, misses, the bound, the size and the last miss's reason of this function's
    executable cache (shared by every `jit` of the same function and options).

    Beyond JAX (whose `_cache_size()` is all it offers): ``last_miss`` says what
    changed since the previous call, e.g. "the argument shapes or dtypes (leaf 0:
    f32[3] -> f32[4])".
    """
    return self._cache.info()


traceback_util.register_boundary(PjitFunction.__call__.__code__)


_MISSING = object()

# Keyword values the fastest path compares directly (by type and value, at C speed).
_PLAIN_TYPES = frozenset({type(None), bool, int, float, str, type, np.dtype})


def _memo_scalar(x) -> bool:
  """Whether the fastest path may match Python scalar `x` by type and value: bools, ints and
  floats other than zeros (0.0 == -0.0) and NaN (never equal to itself)."""
  t = type(x)
  return t is int or t is bool or (t is float and x == x and x != 0.0)


def _same_plain_kwargs(kwargs: dict, memo: dict) -> bool:
  """Whether `kwargs` equals the remembered call's plain keyword values, types included
  (``axis=1`` is not ``axis=True``)."""
  if len(kwargs) != len(memo):
    return False
  for k, v in kwargs.items():
    m = memo.get(k, _MISSING)
    if type(v) is not type(m) or v != m:
      return False
  return True


def _same_statics(a: tuple, b: tuple) -> bool:
  """Whether two calls' statics are equal (as the cache's key lookup would find them); False
  when comparing them raises (the lookup then reports it)."""
  if a is b or (not a and not b):
    return True
  try:
    return a == b
  except Exception:  # noqa: BLE001
    return False


def _static_name(static) -> str:
  return static[0]

def _donation_aliases(closed: core.ClosedJaxpr, donate_mask, warn: bool = False
                      ) -> dict[int, int]:
  """Pairs each donated input with an unclaimed output of the same type; with `warn`, JAX's
  warning names the rest (given at each compilation of a function, as JAX compiles)."""
  outs = list(closed.out_avals)
  claimed = [False] * len(outs)
  aliases, unusable = {}, []
  for i, (aval, donated) in enumerate(zip(closed.in_avals, donate_mask)):
    if not donated:
      continue
    for j, out in enumerate(outs):
      if not claimed[j] and out.shape == aval.shape and out.dtype == aval.dtype:
        claimed[j] = True
        aliases[i] = j
        break
    else:
      unusable.append(aval.str_short())
  if unusable and warn:
    warnings.warn(f"Some donated buffers were not usable: {', '.join(unusable)}.\n"
                  "See an explanation at https://docs.jax.dev/en/latest/faq.html#buffer-donation.",
                  stacklevel=4)
  return aliases


def _is_sharding_leaf(x) -> bool:
  return x is None or isinstance(x, (Sharding, PartitionSpec))


def _names_a_sharding(tree) -> bool:
  """Whether a pytree of jit's in_shardings/out_shardings has a leaf other than None."""
  return any(s is not None for s in tree_util.tree_leaves(tree, is_leaf=_is_sharding_leaf))


def _hashable_tree(tree):
  """A hashable stand-in for a pytree of shardings (part of the cache's options key)."""
  if tree is None:
    return None
  leaves, treedef = tree_util.tree_flatten(tree, is_leaf=_is_sharding_leaf)
  return (treedef, tuple(leaves))


def _resolve_specs(tree, what: str):
  """`tree` with each bare PartitionSpec made a NamedSharding over the context mesh.

  Raises:
    RuntimeError: a PartitionSpec with no context mesh (JAX's text).
    ValueError: a leaf that is neither a sharding, a PartitionSpec nor None.
  """
  def resolve(leaf):
    if leaf is None or isinstance(leaf, Sharding):
      return leaf
    if isinstance(leaf, PartitionSpec):
      mesh = get_concrete_mesh()
      if mesh is None:
        raise RuntimeError(
            f"jit requires a non-empty mesh in context if you are passing `PartitionSpec`s to "
            f"{what}. You can define a context mesh via `jax.set_mesh(mesh)`. Alternatively, "
            f"provide `Sharding`s to {what} and then the mesh context manager is not required.")
      return NamedSharding(mesh, leaf)
    raise ValueError(f"{what} leaves must be Shardings, PartitionSpecs or None, got {leaf!r}")
  return tree_util.tree_map(resolve, tree, is_leaf=_is_sharding_leaf)


def _owned_buffers(leaves, buffers, mask, device) -> list:
  """`buffers` with each donated host value's buffer replaced by one of its own: a donated
  buffer is consumed, and the one `to_buffer` caches for a Python scalar serves every later
  use of that value in the process."""
  return [dispatch.to_buffer(x, device, donated=True) if d and type(x) is not Array else b
          for x, b, d in zip(leaves, buffers, mask)]


def jit(fun=None, *, static_argnums=None, static_argnames=None, donate_argnums=None,
        donate_argnames=None, inline: bool = False, keep_unused: bool = False,
        device=None, backend=None, in_shardings=None, out_shardings=None,
        abstracted_axes=None, compiler_options=None):
  """Compiles `fun` with XLA, tracing it once per argument signature.

  Args:
    fun: a function of arrays (and pytrees of arrays) returning the same.
    static_argnums: positions of arguments treated as compile-time constants;
      they must be hashable, and each new value (or type) retraces.
    static_argnames: names of keyword arguments treated the same way.
    donate_argnums, donate_argnames: arguments whose buffers the computation
      may reuse for its outputs; they are deleted after the call.
    inline: inline this function into an enclosing jit's jaxpr.
    keep_unused: keep unused arguments in the compiled program.
    device: the device to run on (commits the outputs to it).
    backend: the platform to run on; only the one present ('cpu') is known.
    compiler_options: XLA options for this function's compilations, a dict
      of option name to value (e.g. ``{"xla_cpu_enable_fast_math": True}``).
    in_shardings: a Sharding (or PartitionSpec, over the context mesh) per
      positional argument, as a pytree prefix of the argument tuple; None
      entries keep an argument's own sharding (or let XLA choose).
    out_shardings: the same for the outputs (None: XLA's propagation chooses).
    abstracted_axes: not implemented yet; anything but None raises
      NotImplementedError.

  Returns:
    A `PjitFunction` callable; usable as a decorator, with or without arguments.

  Raises:
    TypeError: `fun` is not callable; an argument is not an array type.
    ValueError: static arguments are unhashable or name arguments `fun` lacks.
    RuntimeError: `backend` names a platform that is not present.
    NotImplementedError: abstracted_axes given.

  Mirrors `jax.jit`.
  """
  if abstracted_axes is not None:
    raise NotImplementedError("jit(abstracted_axes=...) is not implemented in xjax yet (no "
                              "shape polymorphism); leave it None.")
  if backend is not None and backend != _backend.platform():
    raise RuntimeError(f"Unknown backend: '{backend}' requested, but no platforms that are "
                       f"instances of {backend} are present. Platforms present are: "
                       f"{_backend.platform()}")
  options = () if compiler_options is None else tuple(sorted(dict(compiler_options).items()))

  def wrap(f):
    return PjitFunction(f, static_argnums, static_argnames, donate_argnums, donate_argnames,
                  inline, keep_unused, device, options, in_shardings, out_shardings)
  if fun is None:
    return wrap
  return wrap(fun)
