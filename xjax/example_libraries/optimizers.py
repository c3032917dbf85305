"""A small library of first-order optimizers over pytrees of arrays.

Mirrors `jax.example_libraries.optimizers`: an optimizer is an
``(init_fun, update_fun, get_params)`` triple.

* ``init_fun(params) -> opt_state`` builds the optimizer state from a pytree of
  initial parameters.
* ``update_fun(step, grads, opt_state) -> opt_state`` applies one step, given
  the step index and a gradient pytree of the parameters' structure.
* ``get_params(opt_state) -> params`` reads the parameters back, so that
  ``get_params(init_fun(params)) == params``.

Each optimizer is written for single arrays and lifted to pytrees by the
`optimizer` decorator; its state is an `OptimizerState`, a registered pytree
node, so it can pass through `jit`, `grad` and `vmap`. Step sizes are scalars
or schedules (functions of the step index), see `make_schedule`.
"""
from __future__ import annotations

import builtins as _builtins
from collections import namedtuple
from collections.abc import Callable
import functools
from functools import partial
from typing import Any, NamedTuple

import xjax as jax
import xjax.numpy as jnp


def safe_map(f, *args):
  """`map` that raises ``ValueError`` unless all argument sequences have one length."""
  args = [list(a) for a in args]
  n = len(args[0])
  for i, a in enumerate(args[1:], 2):
    if len(a) != n:
      relation = "shorter" if len(a) < n else "longer"
      raise ValueError(f"safe_map() argument {i} is {relation} than argument 1")
  return [f(*xs) for xs in _builtins.zip(*args)]


def safe_zip(*args):
  """`zip` that raises ``ValueError`` unless all arguments have one length."""
  args = [list(a) for a in args]
  lengths = tuple(len(a) for a in args)
  for i, n in enumerate(lengths[1:], 1):
    if n != lengths[0]:
      raise ValueError(f"safe_zip() argument {i} has length {n} but argument 0 "
                       f"has length {lengths[0]}. All lengths: {lengths}")
  return list(_builtins.zip(*args))


def unzip2(pairs):
  """Splits an iterable of pairs into a pair of tuples."""
  firsts, seconds = [], []
  for a, b in pairs:
    firsts.append(a)
    seconds.append(b)
  return tuple(firsts), tuple(seconds)


# As in JAX's module, `map` and `zip` below are the length-checking versions.
map = safe_map
zip = safe_zip


# The state is stored flattened in two levels: the leaves of the parameter
# pytree (the outer tree), and for each leaf the pytree its single-array
# optimizer state forms (the inner trees). `packed_state` holds one flat leaf
# list per parameter leaf; `tree_def` and `subtree_defs` are the structures.
OptimizerState = namedtuple("OptimizerState",
                            ["packed_state", "tree_def", "subtree_defs"])
jax.tree_util.register_pytree_node(
    OptimizerState,
    lambda state: ((state.packed_state,), (state.tree_def, state.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]))


Array = Any
Params = Any  # A pytree of arrays.
State = Any   # The optimizer state of one array.
Updates = Params  # Gradients have the parameters' structure.

InitFn = Callable[[Params], OptimizerState]
Step = int
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]


class Optimizer(NamedTuple):
  init_fn: InitFn
  update_fn: UpdateFn
  params_fn: ParamsFn


Schedule = Callable[[Step], float]


def optimizer(opt_maker: Callable[..., tuple[Callable[[Params], State],
                                             Callable[[Step, Updates, Params], Params],
                                             Callable[[State], Params]]]
              ) -> Callable[..., Optimizer]:
  """Lifts an optimizer written for single arrays to pytrees of arrays.

  Args:
    opt_maker: a function returning an ``(init, update, get_params)`` triple
      where ``init(x0)`` maps one array to a pytree of arrays (its state),
      ``update(step, g, state)`` returns a new state of the same structure and
      ``get_params(state)`` returns the array.

  Returns:
    A function with ``opt_maker``'s signature returning an `Optimizer` triple
    that works on arbitrary parameter pytrees, with `OptimizerState` states.
    The update function raises ``TypeError`` if the gradient pytree's structure
    differs from the parameters', or if ``update`` changes a state's structure.

  Mirrors `jax.example_libraries.optimizers.optimizer`.
  """
  @functools.wraps(opt_maker)
  def tree_opt_maker(*args, **kwargs):
    init, update, get_params = opt_maker(*args, **kwargs)

    @functools.wraps(init)
    def tree_init(x0_tree):
      x0_leaves, tree_def = jax.tree.flatten(x0_tree)
      states = [init(x0) for x0 in x0_leaves]
      packed, subtree_defs = unzip2(map(jax.tree.flatten, states))
      return OptimizerState(packed, tree_def, subtree_defs)

    @functools.wraps(update)
    def tree_update(i, grad_tree, opt_state):
      packed, tree_def, subtree_defs = opt_state
      grad_leaves, grad_def = jax.tree.flatten(grad_tree)
      if grad_def != tree_def:
        raise TypeError(
            "optimizer update function was passed a gradient tree that did not "
            "match the parameter tree structure with which it was initialized: "
            f"parameter tree {tree_def} and grad tree {grad_def}.")
      states = map(jax.tree.unflatten, subtree_defs, packed)
      new_states = map(partial(update, i), grad_leaves, states)
      new_packed, new_subtree_defs = unzip2(map(jax.tree.flatten, new_states))
      for before, after in zip(subtree_defs, new_subtree_defs):
        if after != before:
          raise TypeError(
              "optimizer update function produced an output structure that did "
              f"not match its input structure: input {before} and output {after}.")
      return OptimizerState(new_packed, tree_def, subtree_defs)

    @functools.wraps(get_params)
    def tree_get_params(opt_state):
      packed, tree_def, subtree_defs = opt_state
      states = map(jax.tree.unflatten, subtree_defs, packed)
      return jax.tree.unflatten(tree_def, map(get_params, states))

    return Optimizer(tree_init, tree_update, tree_get_params)
  return tree_opt_maker


### Optimizers. Each docstring's update formula uses g for the gradient and
### lr = step_size(i) for the step size at step i.

@optimizer
def sgd(step_size):
  """Stochastic gradient descent: ``x <- x - lr * g``.

  Args:
    step_size: a positive scalar, or a schedule mapping the step index to one.

  Returns:
    An ``(init_fun, update_fun, get_params)`` triple.

  Mirrors `jax.example_libraries.optimizers.sgd`.
  """
  step_size = make_schedule(step_size)
  def init(x0):
    return x0
  def update(i, g, x):
    return x - step_size(i) * g
  def get_params(x):
    return x
  return Optimizer(init, update, get_params)


@optimizer
def momentum(step_size: Schedule, mass: float):
  """SGD with momentum: ``v <- mass * v + g; x <- x - lr * v`` (``v`` starts at 0).

  Args:
    step_size: a positive scalar, or a schedule mapping the step index to one.
    mass: the momentum coefficient.

  Returns:
    An ``(init_fun, update_fun, get_params)`` triple.

  Mirrors `jax.example_libraries.optimizers.momentum`.
  """
  step_size = make_schedule(step_size)
  def init(x0):
    return x0, jnp.zeros_like(x0)
  def update(i, g, state):
    x, velocity = state
    velocity = mass * velocity + g
    return x - step_size(i) * velocity, velocity
  def get_params(state):
    return state[0]
  return init, update, get_params


@optimizer
def nesterov(step_size: Schedule, mass: float):
  """SGD with Nesterov momentum: ``v <- mass * v + g; x <- x - lr * (mass * v + g)``.

  Args:
    step_size: a positive scalar, or a schedule mapping the step index to one.
    mass: the momentum coefficient.

  Returns:
    An ``(init_fun, update_fun, get_params)`` triple.

  Mirrors `jax.example_libraries.optimizers.nesterov`.
  """
  step_size = make_schedule(step_size)
  def init(x0):
    return x0, jnp.zeros_like(x0)
  def update(i, g, state):
    x, velocity = state
    velocity = mass * velocity + g
    return x - step_size(i) * (mass * velocity + g), velocity
  def get_params(state):
    return state[0]
  return init, update, get_params


@optimizer
def adagrad(step_size, momentum=0.9):
  """Adagrad (Duchi et al. 2011) with momentum on the normalized gradient.

  ``s <- s + g**2; m <- (1 - momentum) * g / sqrt(s) + momentum * m;
  x <- x - lr * m``, where ``g / sqrt(s)`` is taken as 0 where ``s == 0``.

  Args:
    step_size: a positive scalar, or a schedule mapping the step index to one.
    momentum: the momentum coefficient (default 0.9).

  Returns:
    An ``(init_fun, update_fun, get_params)`` triple.

  Mirrors `jax.example_libraries.optimizers.adagrad`.
  """
  step_size = make_schedule(step_size)
  def init(x0):
    return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)
  def update(i, g, state):
    x, g_sq, m = state
    g_sq = g_sq + jnp.square(g)
    inv_sqrt = jnp.where(g_sq > 0, 1. / jnp.sqrt(g_sq), 0.0)
    m = (1. - momentum) * (g * inv_sqrt) + momentum * m
    return x - step_size(i) * m, g_sq, m
  def get_params(state):
    return state[0]
  return init, update, get_params


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
  """RMSProp: ``a <- gamma * a + (1 - gamma) * g**2; x <- x - lr * g / sqrt(a + eps)``.

  Args:
    step_size: a positive scalar, or a schedule mapping the step index to one.
    gamma: the decay of the squared-gradient average.
    eps: added to the average before the square root.

  Returns:
    An ``(init_fun, update_fun, get_params)`` triple.

  Mirrors `jax.example_libraries.optimizers.rmsprop`.
  """
  step_size = make_schedule(step_size)
  def init(x0):
    return x0, jnp.zeros_like(x0)
  def update(i, g, state):
    x, avg_sq_grad = state
    avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
    return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad
  def get_params(state):
    return state[0]
  return init, update, get_params


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
  """RMSProp with momentum.

  ``a <- gamma * a + (1 - gamma) * g**2; m <- momentum * m + lr * g / sqrt(a + eps);
  x <- x - m``.

  Args:
    step_size: a positive scalar, or a schedule mapping the step index to one.
    gamma: the decay of the squared-gradient average.
    eps: added to the average before the square root.
    momentum: the momentum coefficient.

  Returns:
    An ``(init_fun, update_fun, get_params)`` triple.

  Mirrors `jax.example_libraries.optimizers.rmsprop_momentum`.
  """
  step_size = make_schedule(step_size)
  def init(x0):
    return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)
  def update(i, g, state):
    x, avg_sq_grad, mom = state
    avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
    mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
    return x - mom, avg_sq_grad, mom
  def get_params(state):
    return state[0]
  return init, update, get_params


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
  """Adam (Kingma and Ba 2015).

  ``m <- (1 - b1) * g + b1 * m; v <- (1 - b2) * g**2 + b2 * v;
  x <- x - lr * mhat / (sqrt(vhat) + eps)`` with the bias corrections
  ``mhat = m / (1 - b1**(i + 1))`` and ``vhat = v / (1 - b2**(i + 1))``.

  Args:
    step_size: a positive scalar, or a schedule mapping the step index to one.
    b1: decay of the first-moment estimate (default 0.9).
    b2: decay of the second-moment estimate (default 0.999).
    eps: added to ``sqrt(vhat)`` (default 1e-8).

  Returns:
    An ``(init_fun, update_fun, get_params)`` triple.

  Mirrors `jax.example_libraries.optimizers.adam`.
  """
  step_size = make_schedule(step_size)
  def init(x0):
    return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)
  def update(i, g, state):
    x, m, v = state
    m = (1 - b1) * g + b1 * m
    v = (1 - b2) * jnp.square(g) + b2 * v
    mhat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
    vhat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
    return x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps), m, v
  def get_params(state):
    return state[0]
  return init, update, get_params


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
  """AdaMax, Adam's variant with an infinity norm.

  ``m <- (1 - b1) * g + b1 * m; u <- max(b2 * u, |g|);
  x <- x - lr / (1 - b1**(i + 1)) * m / (u + eps)``.

  Args:
    step_size: a positive scalar, or a schedule mapping the step index to one.
    b1: decay of the first-moment estimate (default 0.9).
    b2: decay of the infinity norm (default 0.999).
    eps: added to ``u`` (default 1e-8).

  Returns:
    An ``(init_fun, update_fun, get_params)`` triple.

  Mirrors `jax.example_libraries.optimizers.adamax`.
  """
  step_size = make_schedule(step_size)
  def init(x0):
    return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)
  def update(i, g, state):
    x, m, u = state
    m = (1 - b1) * g + b1 * m
    u = jnp.maximum(b2 * u, jnp.abs(g))
    corrected_lr = step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
    return x - corrected_lr * m / (u + eps), m, u
  def get_params(state):
    return state[0]
  return init, update, get_params


@optimizer
def sm3(step_size, momentum=0.9):
  """SM3 (Anil et al. 2019), a memory-efficient Adagrad with momentum.

  Keeps one accumulator vector per axis of the parameter; at each step the
  per-element accumulator is the minimum of their broadcasts plus ``g**2``,
  ``m <- (1 - momentum) * g / sqrt(acc) + momentum * m`` (0 where ``acc == 0``),
  ``x <- x - lr * m``, and each axis vector becomes the maximum of ``acc`` over
  the other axes. Scalars are treated as 1-element vectors.

  Args:
    step_size: a positive scalar, or a schedule mapping the step index to one.
    momentum: the momentum coefficient (default 0.9).

  Returns:
    An ``(init_fun, update_fun, get_params)`` triple.

  Mirrors `jax.example_libraries.optimizers.sm3`.
  """
  step_size = make_schedule(step_size)

  def along_axis(ndim, v, axis):
    # View the 1-D `v` as an `ndim`-D array varying only along `axis` (a 0-D
    # gradient, whose parameter is stored as 1-D, leaves `v` 1-D).
    shape = [1] * ndim
    shape[axis:axis + 1] = [v.shape[0]]
    return v.reshape(shape)

  def init(x0):
    x_shape = x0.shape
    x0 = jnp.atleast_1d(x0)
    vs = [jnp.zeros(n, dtype=x0.dtype) for n in x0.shape]
    return x0, jnp.zeros_like(x0), vs, x_shape

  def update(i, g, state):
    x, m, vs, x_shape = state
    vs = [along_axis(g.ndim, v, axis) for axis, v in enumerate(vs)]
    accum = functools.reduce(jnp.minimum, vs) + jnp.square(g)
    inv_sqrt = jnp.where(accum > 0, 1. / jnp.sqrt(accum), 0)
    m = (1. - momentum) * (g * inv_sqrt) + momentum * m
    x = x - step_size(i) * m
    vs = [accum.max(tuple(a for a in range(x.ndim) if a != axis))
          for axis in range(x.ndim)]
    return x, m, vs, x_shape

  def get_params(state):
    x, _, _, x_shape = state
    return x.reshape(x_shape)

  return init, update, get_params


### Step-size schedules: functions of the step index.

def constant(step_size) -> Schedule:
  """Returns the schedule ``i -> step_size``.

  Mirrors `jax.example_libraries.optimizers.constant`.
  """
  def schedule(i):
    return step_size
  return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
  """Returns the schedule ``i -> step_size * decay_rate ** (i / decay_steps)``.

  Mirrors `jax.example_libraries.optimizers.exponential_decay`.
  """
  def schedule(i):
    return step_size * decay_rate ** (i / decay_steps)
  return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
  """Returns the schedule ``i -> step_size / (1 + decay_rate * i / decay_steps)``.

  With ``staircase=True`` the ratio ``i / decay_steps`` is floored, so the step
  size changes every ``decay_steps`` steps.

  Mirrors `jax.example_libraries.optimizers.inverse_time_decay`.
  """
  if staircase:
    def schedule(i):
      return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
  else:
    def schedule(i):
      return step_size / (1 + decay_rate * i / decay_steps)
  return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
  """Returns a schedule decaying polynomially to ``final_step_size``.

  ``i -> (1 - min(i, decay_steps) / decay_steps) ** power
  * (step_size - final_step_size) + final_step_size``.

  Mirrors `jax.example_libraries.optimizers.polynomial_decay`.
  """
  def schedule(step_num):
    step_num = jnp.minimum(step_num, decay_steps)
    step_mult = (1 - step_num / decay_steps) ** power
    return step_mult * (step_size - final_step_size) + final_step_size
  return schedule


def piecewise_constant(boundaries: Any, values: Any):
  """Returns the schedule ``i -> values[number of boundaries b with i > b]``.

  Args:
    boundaries: a 1-D sequence of step indices, increasing.
    values: a 1-D sequence one longer than ``boundaries``.

  Raises:
    ValueError: if either is not 1-D, or the lengths do not fit.

  Mirrors `jax.example_libraries.optimizers.piecewise_constant`.
  """
  boundaries = jnp.array(boundaries)
  values = jnp.array(values)
  if not boundaries.ndim == values.ndim == 1:
    raise ValueError("boundaries and values must be sequences")
  if not boundaries.shape[0] == values.shape[0] - 1:
    raise ValueError("boundaries length must be one shorter than values length")
  def schedule(i):
    return values[jnp.sum(i > boundaries)]
  return schedule


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
  """Returns a callable unchanged and wraps a scalar in `constant`.

  Raises:
    TypeError: for anything else (e.g. an array of nonzero rank), with the
      argument's type as the message.

  Mirrors `jax.example_libraries.optimizers.make_schedule`.
  """
  if callable(scalar_or_schedule):
    return scalar_or_schedule
  if jnp.ndim(scalar_or_schedule) == 0:
    return constant(scalar_or_schedule)
  raise TypeError(type(scalar_or_schedule))


### Utilities.

def l2_norm(tree):
  """Returns the l2 norm of all the leaves of a pytree of arrays, as one scalar.

  Mirrors `jax.example_libraries.optimizers.l2_norm`.
  """
  leaves, _ = jax.tree.flatten(tree)
  return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
  """Scales a gradient pytree so that its `l2_norm` is at most ``max_norm``.

  Trees whose norm is below ``max_norm`` are returned unchanged (in value).

  Mirrors `jax.example_libraries.optimizers.clip_grads`.
  """
  norm = l2_norm(grad_tree)
  def clip(g):
    return jnp.where(norm < max_norm, g, g * (max_norm / norm))
  return jax.tree.map(clip, grad_tree)


### Serialization.

class JoinPoint:
  """Marks where an inner (per-leaf state) pytree joins the outer parameter pytree."""

  def __init__(self, subtree):
    self.subtree = subtree

  def __iter__(self):
    # Look like a container, as serializers of nested arrays expect.
    yield self.subtree


def unpack_optimizer_state(opt_state):
  """Converts an `OptimizerState` to the parameter pytree with `JoinPoint` leaves.

  Each leaf is a `JoinPoint` holding that parameter's state pytree, so the
  result keeps both levels of structure, e.g. for serialization.

  Mirrors `jax.example_libraries.optimizers.unpack_optimizer_state`.
  """
  packed, tree_def, subtree_defs = opt_state
  subtrees = map(jax.tree.unflatten, subtree_defs, packed)
  return jax.tree.unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree):
  """Converts a pytree with `JoinPoint` leaves back to an `OptimizerState`.

  The inverse of `unpack_optimizer_state`. Raises ``AssertionError`` if a leaf
  is not a `JoinPoint`.

  Mirrors `jax.example_libraries.optimizers.pack_optimizer_state`.
  """
  join_points, tree_def = jax.tree.flatten(marked_pytree)
  assert all(isinstance(p, JoinPoint) for p in join_points)
  packed, subtree_defs = unzip2(map(jax.tree.flatten, [p.subtree for p in join_points]))
  return OptimizerState(packed, tree_def, subtree_defs)
