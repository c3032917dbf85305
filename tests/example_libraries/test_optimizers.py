"""Tests of xjax.example_libraries.optimizers: update formulas vs NumPy, goldens from JAX."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax.example_libraries import optimizers as opt

# Public names of jax.example_libraries.optimizers 0.10.2.
JAX_NAMES = [
    'Any', 'Array', 'Callable', 'InitFn', 'JoinPoint', 'NamedTuple', 'Optimizer',
    'OptimizerState', 'Params', 'ParamsFn', 'Schedule', 'State', 'Step', 'UpdateFn',
    'Updates', 'adagrad', 'adam', 'adamax', 'annotations', 'clip_grads', 'constant',
    'exponential_decay', 'functools', 'inverse_time_decay', 'jax', 'jnp', 'l2_norm',
    'make_schedule', 'map', 'momentum', 'namedtuple', 'nesterov', 'optimizer',
    'pack_optimizer_state', 'partial', 'piecewise_constant', 'polynomial_decay',
    'rmsprop', 'rmsprop_momentum', 'safe_map', 'safe_zip', 'sgd', 'sm3',
    'unpack_optimizer_state', 'unzip2', 'zip']


def test_public_names_match_jax():
  assert len(JAX_NAMES) == 46
  assert sorted(n for n in dir(opt) if not n.startswith('_')) == JAX_NAMES


### NumPy references: one update of one array, state as a tuple of arrays.

def _np_sm3_update(lr, momentum, i, g, state):
  x, m, vs = state
  g = np.atleast_1d(g)
  views = []
  for axis, v in enumerate(vs):
    shape = [1] * g.ndim
    shape[axis] = v.shape[0]
    views.append(v.reshape(shape))
  accum = np.minimum.reduce(np.broadcast_arrays(*views)) + g ** 2
  inv = np.where(accum > 0, 1 / np.sqrt(np.where(accum > 0, accum, 1)), 0)
  m = (1 - momentum) * g * inv + momentum * m
  x = x - lr * m
  vs = [accum.max(axis=tuple(a for a in range(x.ndim) if a != axis))
        for axis in range(x.ndim)]
  return x, m, vs


def _np_update(name, i, g, state):
  lr = 0.1
  if name == 'sgd':
    (x,) = state
    return (x - lr * g,)
  if name in ('momentum', 'nesterov'):
    x, v = state
    v = 0.9 * v + g
    step = v if name == 'momentum' else 0.9 * v + g
    return x - lr * step, v
  if name == 'adagrad':
    x, s, m = state
    s = s + g ** 2
    inv = np.where(s > 0, 1 / np.sqrt(np.where(s > 0, s, 1)), 0)
    m = 0.1 * g * inv + 0.9 * m
    return x - lr * m, s, m
  if name == 'rmsprop':
    x, a = state
    a = 0.9 * a + 0.1 * g ** 2
    return x - lr * g / np.sqrt(a + 1e-8), a
  if name == 'rmsprop_momentum':
    x, a, m = state
    a = 0.9 * a + 0.1 * g ** 2
    m = 0.9 * m + lr * g / np.sqrt(a + 1e-8)
    return x - m, a, m
  if name == 'adam':
    x, m, v = state
    m = 0.1 * g + 0.9 * m
    v = 0.001 * g ** 2 + 0.999 * v
    mhat, vhat = m / (1 - 0.9 ** (i + 1)), v / (1 - 0.999 ** (i + 1))
    return x - lr * mhat / (np.sqrt(vhat) + 1e-8), m, v
  if name == 'adamax':
    x, m, u = state
    m = 0.1 * g + 0.9 * m
    u = np.maximum(0.999 * u, np.abs(g))
    return x - lr / (1 - 0.9 ** (i + 1)) * m / (u + 1e-8), m, u
  raise AssertionError(name)


OPTIMIZERS = {
    'sgd': lambda: opt.sgd(0.1),
    'momentum': lambda: opt.momentum(0.1, 0.9),
    'nesterov': lambda: opt.nesterov(0.1, mass=0.9),
    'adagrad': lambda: opt.adagrad(0.1),
    'rmsprop': lambda: opt.rmsprop(0.1),
    'rmsprop_momentum': lambda: opt.rmsprop_momentum(0.1),
    'adam': lambda: opt.adam(0.1),
    'adamax': lambda: opt.adamax(0.1),
    'sm3': lambda: opt.sm3(0.1),
}


def _random_tree(rng):
  return {'w': rng.normal(size=(3,)).astype(np.float32),
          'm': (rng.normal(size=(2, 3)).astype(np.float32), np.float32(rng.normal()))}


@pytest.mark.parametrize('name', sorted(OPTIMIZERS))
def test_update_matches_numpy_formula(name, rng):
  init, update, get_params = OPTIMIZERS[name]()
  params = _random_tree(rng)
  leaves = xjax.tree.leaves(params)
  state = init(params)
  if name == 'sm3':
    np_states = [(np.atleast_1d(x).astype(np.float64), np.zeros(np.atleast_1d(x).shape),
                  [np.zeros(n) for n in np.atleast_1d(x).shape]) for x in leaves]
  else:
    extra = {'sgd': 0, 'momentum': 1, 'nesterov': 1, 'rmsprop': 1}.get(name, 2)
    np_states = [(x.astype(np.float64),) + (np.zeros(np.shape(x)),) * extra for x in leaves]
  for i in range(3):
    grads = _random_tree(rng)
    state = update(i, grads, state)
    g_leaves = [np.float64(g) if np.ndim(g) == 0 else g.astype(np.float64)
                for g in xjax.tree.leaves(grads)]
    if name == 'sm3':
      np_states = [_np_sm3_update(0.1, 0.9, i, g, s) for g, s in zip(g_leaves, np_states)]
    else:
      np_states = [_np_update(name, i, g, s) for g, s in zip(g_leaves, np_states)]
  got = xjax.tree.leaves(get_params(state))
  for g, s, x0 in zip(got, np_states, leaves):
    assert g.shape == np.shape(x0) and g.dtype == np.float32
    np.testing.assert_allclose(np.asarray(g), s[0].reshape(np.shape(x0)), rtol=2e-5, atol=2e-6)
  # The whole state, not only the parameters, follows the formula.
  for packed, s in zip(state.packed_state, np_states):
    want = list(s) if name != 'sm3' else [s[0], s[1], *s[2]]
    for a, b in zip(packed, want):
      np.testing.assert_allclose(np.asarray(a), b, rtol=2e-5, atol=2e-6)


# Five steps on sum_k 0.5 * (k + 1) * x_k**2 - x_k (leaf k of the tree below),
# recorded with jax 0.10.2 (update jitted, except sm3): (w, m[0], m[1]).
GOLDEN_FIVE_STEPS = {
    'sgd': ([0.4453800320625305, -0.058829981833696365, 0.7815200090408325], [[0.7047550678253174, -0.18097999691963196], [1.5904898643493652, 0.4095099866390228]], 0.8276799917221069),
    'sgd_sched': ([0.5917534232139587, -0.5711370706558228, 1.3670138120651245], [[0.6263551115989685, -0.494579553604126], [1.747289776802063, 0.252710223197937]], 1.0457416772842407),
    'momentum': ([-0.1855199933052063, 2.149319887161255, -1.7420798540115356], [[1.0145800113677979, 1.0583199262619019], [0.9708400964736938, 1.0291599035263062]], -0.08041995018720627),
    'nesterov': ([0.10143186897039413, 1.1449884176254272, -0.5942725539207458], [[1.0522907972335815, 1.2091633081436157], [0.8954183459281921, 1.1045817136764526]], 0.08428246527910233),
    'adagrad': ([0.9062891006469727, -1.9054421186447144, 2.905400514602661], [[0.5933030843734741, -0.9054974317550659], [1.9058893918991089, 0.09411067515611649]], 1.4058893918991089),
    'rmsprop': ([0.3638775050640106, -1.0302797555923462, 2.0168371200561523], [[0.9978253841400146, -0.04892730340361595], [1.199795126914978, 0.800204873085022]], 0.699795126914978),
    'rmsprop_momentum': ([-0.1840442419052124, 0.6357748508453369, 0.29354017972946167], [[1.2593668699264526, 1.5357427597045898], [0.214579775929451, 1.785420298576355]], -0.285420298576355),
    'adam': ([0.5159078240394592, -1.502429485321045, 2.5020577907562256], [[0.9721822738647461, -0.5029595494270325], [1.5079675912857056, 0.49203261733055115]], 1.0079675912857056),
    'adamax': ([0.5763487815856934, -1.5220139026641846, 2.5191776752471924], [[0.8998161554336548, -0.5257776975631714], [1.5515538454055786, 0.4484460949897766]], 1.0515538454055786),
    'sm3': ([0.9062891006469727, -1.9054421186447144, 2.905400514602661], [[0.571936845779419, -0.9054974317550659], [1.9058893918991089, 0.09411068260669708]], 1.4058893918991089),
}


def _quadratic_loss(p):
  return sum(jnp.sum(0.5 * (k + 1.0) * x ** 2 - x) for k, x in enumerate(xjax.tree.leaves(p)))


@pytest.mark.parametrize('name', sorted(GOLDEN_FIVE_STEPS))
def test_five_steps_match_jax_goldens(name):
  if name == 'sgd_sched':
    init, update, get_params = opt.sgd(opt.exponential_decay(0.1, 2, 0.5))
  else:
    init, update, get_params = OPTIMIZERS[name]()
  params = {'w': jnp.array([1., -2., 3.]),
            'm': (jnp.array([[0.5, -1.], [2., 0.]]), jnp.float32(1.5))}
  state = init(params)
  step = update if name == 'sm3' else xjax.jit(update)
  for i in range(5):
    state = step(i, xjax.grad(_quadratic_loss)(get_params(state)), state)
  got = get_params(state)
  w, m0, m1 = GOLDEN_FIVE_STEPS[name]
  np.testing.assert_allclose(np.asarray(got['w']), np.float32(w), rtol=1e-6, atol=1e-7)
  np.testing.assert_allclose(np.asarray(got['m'][0]), np.float32(m0), rtol=1e-6, atol=1e-7)
  np.testing.assert_allclose(np.asarray(got['m'][1]), np.float32(m1), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize('name', sorted(set(OPTIMIZERS) - {'sm3'}))
def test_jitted_train_step_matches_eager(name):
  init, update, get_params = OPTIMIZERS[name]()

  def train_step(i, state):
    loss, grads = xjax.value_and_grad(_quadratic_loss)(get_params(state))
    return loss, update(i, grads, state)

  params = {'w': jnp.array([1., -2., 3.]), 'm': (jnp.array([[0.5, -1.], [2., 0.]]),)}
  eager = jitted = init(params)
  jit_step = xjax.jit(train_step)
  for i in range(3):
    loss_e, eager = train_step(i, eager)
    loss_j, jitted = jit_step(i, jitted)
    np.testing.assert_allclose(np.asarray(loss_j), np.asarray(loss_e), rtol=1e-6)
  assert xjax.tree.structure(jitted) == xjax.tree.structure(eager)
  # XLA fuses the jitted step differently: agreement to float32 rounding.
  for a, b in zip(xjax.tree.leaves(jitted), xjax.tree.leaves(eager)):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def test_sm3_jit():
  # sm3 keeps the parameter's shape as integer leaves of its state, so, as in
  # JAX, `update` jits but `get_params` cannot reshape by traced sizes.
  init, update, get_params = opt.sm3(0.1)
  state = init({'w': jnp.arange(6.).reshape(2, 3)})
  grads = {'w': jnp.ones((2, 3))}
  jitted, eager = xjax.jit(update)(0, grads, state), update(0, grads, state)
  np.testing.assert_allclose(np.asarray(get_params(jitted)['w']),
                             np.asarray(get_params(eager)['w']), rtol=1e-6)
  with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values"):
    xjax.jit(get_params)(state)


def test_sgd_on_python_scalars_and_weak_types():
  init, update, get_params = opt.sgd(0.5)
  state = init({'a': 1.0, 'b': 2.0})
  assert state.packed_state == ([1.0], [2.0])
  state = update(0, {'a': 1.0, 'b': -2.0}, state)
  got = get_params(state)
  assert float(got['a']) == 0.5 and float(got['b']) == 3.0


### OptimizerState, the decorator and its errors.

def test_optimizer_state_is_a_pytree_node():
  init, update, get_params = opt.momentum(0.1, 0.9)
  params = {'a': jnp.ones(2), 'b': [jnp.zeros(3)]}
  state = init(params)
  assert isinstance(state, opt.OptimizerState)
  assert state._fields == ('packed_state', 'tree_def', 'subtree_defs')
  assert state.tree_def == xjax.tree.structure(params)
  leaves = xjax.tree.leaves(state)
  assert [np.shape(x) for x in leaves] == [(2,), (2,), (3,), (3,)]
  doubled = xjax.tree.map(lambda x: 2 * x, state)
  assert isinstance(doubled, opt.OptimizerState)
  assert doubled.tree_def == state.tree_def and doubled.subtree_defs == state.subtree_defs
  np.testing.assert_array_equal(np.asarray(get_params(doubled)['a']), [2., 2.])
  # A vmapped update over a batch of states.
  batched = xjax.tree.map(lambda x: jnp.stack([x, x + 1]), state)
  grads = {'a': jnp.ones(2), 'b': [jnp.ones(3)]}
  out = xjax.vmap(lambda s: update(0, grads, s))(batched)
  # Batch 1 has x = 2, v = 1: v <- 0.9 * 1 + 1, x <- 2 - 0.1 * 1.9.
  np.testing.assert_allclose(np.asarray(get_params(out)['a']), [[0.9, 0.9], [1.81, 1.81]], rtol=1e-6)


def test_gradient_tree_mismatch_raises_type_error():
  init, update, _ = opt.sgd(0.1)
  state = init({'a': 1.0, 'b': 2.0})
  with pytest.raises(TypeError) as e:
    update(0, {'a': 1.0, 'c': 2.0}, state)
  assert str(e.value) == (
      "optimizer update function was passed a gradient tree that did not match "
      "the parameter tree structure with which it was initialized: parameter tree "
      "PyTreeDef({'a': *, 'b': *}) and grad tree PyTreeDef({'a': *, 'c': *}).")
  with pytest.raises(TypeError, match=r"grad tree PyTreeDef\(\[\*, \*\]\)\."):
    update(0, [1.0, 2.0], state)


def test_optimizer_decorator_lifts_array_optimizers():
  @opt.optimizer
  def halve(scale):
    """Halves the params, remembering a step count."""
    def init(x0):
      return {'x': x0, 'n': 0}
    def update(i, g, state):
      return {'x': scale * state['x'] + g, 'n': state['n'] + 1}
    def get_params(state):
      return state['x']
    return init, update, get_params

  assert halve.__name__ == 'halve' and 'Halves' in halve.__doc__
  triple = halve(0.5)
  assert isinstance(triple, opt.Optimizer)
  assert triple._fields == ('init_fn', 'update_fn', 'params_fn')
  assert triple.init_fn.__name__ == 'init' and triple.params_fn.__name__ == 'get_params'
  state = triple.init_fn((jnp.array([4., 8.]), jnp.array(2.)))
  state = triple.update_fn(0, (jnp.ones(2), jnp.zeros(())), state)
  got = triple.params_fn(state)
  np.testing.assert_array_equal(np.asarray(got[0]), [3., 5.])
  np.testing.assert_array_equal(np.asarray(got[1]), 1.)
  assert [int(s[0]) for s in state.packed_state] == [1, 1]


def test_update_changing_state_structure_raises_type_error():
  @opt.optimizer
  def bad():
    return (lambda x0: (x0, x0), lambda i, g, s: (s[0], s[1], g), lambda s: s[0])
  init, update, _ = bad()
  state = init(jnp.ones(2))
  with pytest.raises(TypeError) as e:
    update(0, jnp.ones(2), state)
  assert str(e.value) == (
      "optimizer update function produced an output structure that did not match "
      "its input structure: input PyTreeDef((*, *)) and output PyTreeDef((*, *, *)).")


### Schedules.

def test_schedules_match_formulas_and_jax_goldens():
  steps = np.arange(7)
  cases = [
      (opt.constant(0.3), np.full(7, 0.3), None),
      (opt.exponential_decay(0.5, 3, 0.1), 0.5 * 0.1 ** (steps / 3),
       [0.5, 0.23207944168063896, 0.1077217345015942, 0.05, 0.0232079441680639,
        0.010772173450159418, 0.005000000000000001]),
      (opt.inverse_time_decay(0.5, 2, 0.3), 0.5 / (1 + 0.3 * steps / 2),
       [0.5, 0.4347826086956522, 0.3846153846153846, 0.3448275862068966, 0.3125,
        0.2857142857142857, 0.2631578947368421]),
      (opt.inverse_time_decay(0.5, 2, 0.3, staircase=True),
       0.5 / (1 + 0.3 * np.floor(steps / 2)),
       [0.5, 0.5, 0.38461539149284363, 0.38461539149284363, 0.3125, 0.3125,
        0.2631578743457794]),
      (opt.polynomial_decay(1.0, 4, 0.1, power=2.0),
       (1 - np.minimum(steps, 4) / 4) ** 2 * 0.9 + 0.1,
       [1.0, 0.606249988079071, 0.32499998807907104, 0.15625, 0.10000000149011612,
        0.10000000149011612, 0.10000000149011612]),
      (opt.piecewise_constant([2, 4], [1.0, 0.5, 0.1]),
       np.array([1.0, 1.0, 1.0, 0.5, 0.5, 0.1, 0.1]),
       [1.0, 1.0, 1.0, 0.5, 0.5, 0.10000000149011612, 0.10000000149011612]),
  ]
  for schedule, formula, golden in cases:
    got = np.array([float(schedule(int(i))) for i in steps])
    np.testing.assert_allclose(got, formula, rtol=1e-6)
    if golden is not None:
      np.testing.assert_allclose(got, golden, rtol=1e-7)
    np.testing.assert_allclose(float(xjax.jit(schedule)(3)), formula[3], rtol=1e-6)


def test_schedule_return_types():
  # Python arithmetic stays Python; jnp-based schedules return arrays.
  assert type(opt.exponential_decay(0.5, 3, 0.1)(2)) is float
  assert type(opt.inverse_time_decay(0.5, 2, 0.3)(2)) is float
  assert isinstance(opt.inverse_time_decay(0.5, 2, 0.3, staircase=True)(2), xjax.Array)
  assert isinstance(opt.polynomial_decay(1.0, 4, 0.1)(2), xjax.Array)
  assert opt.constant(0.25)(100) == 0.25


@pytest.mark.parametrize('boundaries, values, message', [
    ([1, 2], [1.0, 2.0], "boundaries length must be one shorter than values length"),
    ([[1]], [[1, 2]], "boundaries and values must be sequences"),
    (3, [1, 2], "boundaries and values must be sequences"),
])
def test_piecewise_constant_errors(boundaries, values, message):
  with pytest.raises(ValueError) as e:
    opt.piecewise_constant(boundaries, values)
  assert str(e.value) == message


def test_make_schedule():
  sched = opt.exponential_decay(1.0, 1, 0.5)
  assert opt.make_schedule(sched) is sched
  assert opt.make_schedule(0.3)(7) == 0.3
  assert float(opt.make_schedule(jnp.float32(0.5))(1)) == 0.5
  with pytest.raises(TypeError) as e:
    opt.make_schedule(jnp.ones(2))
  assert str(e.value) == str(xjax.Array)
  with pytest.raises(TypeError):
    opt.sgd([0.1, 0.2])


### Utilities.

def test_l2_norm_and_clip_grads(rng):
  tree = {'a': jnp.array([3., 4.]), 'b': [jnp.array([[12.]])]}
  assert float(opt.l2_norm(tree)) == 13.0
  clipped = opt.clip_grads(tree, 1.0)
  np.testing.assert_allclose(np.asarray(clipped['a']), [3 / 13, 4 / 13], rtol=1e-6)
  np.testing.assert_allclose(np.asarray(clipped['b'][0]), [[12 / 13]], rtol=1e-6)
  np.testing.assert_allclose(float(opt.l2_norm(clipped)), 1.0, rtol=1e-6)
  unchanged = opt.clip_grads(tree, 100.0)
  np.testing.assert_array_equal(np.asarray(unchanged['a']), [3., 4.])
  # Random trees, complex included: vdot conjugates, so the norm is real.
  leaves = [rng.normal(size=(2, 3)).astype(np.float32), rng.normal(size=(4,)).astype(np.float32)]
  norm = np.sqrt(sum(np.sum(x.astype(np.float64) ** 2) for x in leaves))
  np.testing.assert_allclose(float(opt.l2_norm(leaves)), norm, rtol=1e-6)
  np.testing.assert_allclose(float(xjax.jit(opt.l2_norm)(leaves)), norm, rtol=1e-6)
  z = jnp.array([3 + 4j], dtype=jnp.complex64)
  np.testing.assert_allclose(complex(opt.l2_norm([z])), 5.0, rtol=1e-6)
  clipped = xjax.jit(opt.clip_grads, static_argnums=1)(leaves, 0.5)
  for c, x in zip(clipped, leaves):
    np.testing.assert_allclose(np.asarray(c), x * (0.5 / norm), rtol=1e-5)


def test_pack_unpack_round_trip():
  init, update, get_params = opt.adam(0.1)
  params = {'a': jnp.ones(2), 'b': [jnp.zeros((1, 3)), 2.0]}
  state = update(0, xjax.tree.map(jnp.ones_like, params), init(params))
  marked = opt.unpack_optimizer_state(state)
  assert sorted(marked) == ['a', 'b'] and isinstance(marked['b'], list)
  assert all(isinstance(j, opt.JoinPoint) for j in (marked['a'], *marked['b']))
  x, m, v = marked['a'].subtree
  np.testing.assert_array_equal(np.asarray(x), np.asarray(get_params(state)['a']))
  assert list(iter(marked['a'])) == [marked['a'].subtree]
  repacked = opt.pack_optimizer_state(marked)
  assert isinstance(repacked, opt.OptimizerState)
  assert repacked.tree_def == state.tree_def
  assert tuple(repacked.subtree_defs) == tuple(state.subtree_defs)
  for a, b in zip(xjax.tree.leaves(repacked), xjax.tree.leaves(state)):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
  # The repacked state keeps working.
  again = update(1, xjax.tree.map(jnp.ones_like, params), repacked)
  assert get_params(again)['b'][0].shape == (1, 3)
  with pytest.raises(AssertionError):
    opt.pack_optimizer_state({'a': 1.0})


def test_safe_map_zip_unzip2():
  assert opt.safe_map(lambda a, b: a + b, [1, 2], (3, 4)) == [4, 6]
  assert opt.map is opt.safe_map and opt.zip is opt.safe_zip
  assert opt.safe_zip((1,), (2,)) == [(1, 2)]
  assert opt.unzip2([]) == ((), ())
  assert opt.unzip2([(1, 2), (3, 4)]) == ((1, 3), (2, 4))
  with pytest.raises(ValueError, match=r"^safe_map\(\) argument 2 is shorter than argument 1$"):
    opt.safe_map(lambda a, b: a, [1, 2], [1])
  with pytest.raises(ValueError, match=r"^safe_map\(\) argument 2 is longer than argument 1$"):
    opt.safe_map(lambda a, b: a, [1], [1, 2])
  with pytest.raises(ValueError) as e:
    opt.safe_zip([1], [1, 2])
  assert str(e.value) == ("safe_zip() argument 1 has length 2 but argument 0 has length 1. "
                          "All lengths: (1, 2)")
