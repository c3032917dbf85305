"""Interned avals (issue 34): `ShapedArray(...)` returns one object per (shape, dtype,
weak_type, sharding) while that object is alive, so jit's call paths, which compare avals by
identity, take their fast path for arguments made by any earlier call."""
import copy
import gc
import itertools
import pickle
import sys
import threading
import weakref

import ml_dtypes
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src import core
from xjax._src.core import ShapedArray
from xjax.sharding import AbstractMesh, AxisType, NamedSharding, PartitionSpec as P

SHAPES = [(), (0,), (3,), (2, 3), (1, 2, 3, 4)]
DTYPES = [np.float32, np.int32, np.bool_, np.complex64, np.float16, np.uint8,
          ml_dtypes.bfloat16]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("weak_type", [False, True])
def test_equal_avals_are_one_object(shape, dtype, weak_type):
  a = ShapedArray(shape, dtype, weak_type)
  # The same fields spelled otherwise: a list, NumPy integers, a dtype object or its name.
  spellings = [ShapedArray(shape, dtype, weak_type),
               ShapedArray(list(shape), np.dtype(dtype), int(weak_type)),
               ShapedArray(tuple(np.int64(d) for d in shape), np.dtype(dtype).name, weak_type),
               ShapedArray(np.array(shape, np.int64), dtype, np.bool_(weak_type)),
               a.update(), a.update(shape=shape, dtype=dtype, weak_type=weak_type)]
  assert all(b is a for b in spellings)
  assert a.shape == shape and all(type(d) is int for d in a.shape)
  assert a.dtype == np.dtype(dtype) and a.weak_type is weak_type


def test_avals_that_differ_are_different_objects():
  base = ShapedArray((2, 3), np.float32)
  others = [ShapedArray((3, 2), np.float32), ShapedArray((2, 3, 1), np.float32),
            ShapedArray((2, 3), np.float64), ShapedArray((2, 3), np.int32),
            ShapedArray((2, 3), np.float32, True), base.update(shape=(6,)),
            base.update(dtype=np.float16), ShapedArray((2, 3), np.float32, sharding=None)]
  for a, b in itertools.combinations([base, *others[:-1]], 2):
    assert a is not b and a != b
  assert others[-1] is base
  assert base.update_weak_type(True) is others[4] and others[4].strip_weak_type() is base
  assert base.to_tangent_aval() is base  # a float aval is its own tangent aval


def test_shardings_are_part_of_the_key():
  def mesh():
    return AbstractMesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
  rows, cols = NamedSharding(mesh(), P("x", None)), NamedSharding(mesh(), P(None, "y"))
  a = ShapedArray((8, 4), np.float32, False, rows)
  assert ShapedArray((8, 4), np.float32, False, NamedSharding(mesh(), P("x", None))) is a
  assert ShapedArray((8, 4), np.float32, False, cols) is not a
  assert ShapedArray((8, 4), np.float32) is not a
  assert a.update(sharding=None) is ShapedArray((8, 4), np.float32)
  assert a.update(weak_type=True).update(weak_type=False) is a
  assert str(a) == "float32[8@x,4]"


def test_extended_dtypes_are_interned():
  k1, k2 = xjax.random.key(0), xjax.random.key(1)
  assert xjax.typeof(k1) is xjax.typeof(k2)
  assert xjax.typeof(xjax.random.split(k1, 3)) is xjax.typeof(xjax.random.split(k2, 3))


def test_unreferenced_avals_are_freed():
  shape = (7, 11, 13, 17)
  ref = weakref.ref(ShapedArray(shape, np.int8))
  gc.collect()
  assert ref() is None
  # A new aval takes the dead one's place.
  a = ShapedArray(shape, np.int8)
  assert ShapedArray(shape, np.int8) is a and ref() is None


def test_the_table_sheds_dead_entries():
  n_live = sum(r() is not None for r in list(core._aval_table.values()))
  for n in range(20_000):
    ShapedArray((n, 5, 3), np.float32)
  # Dead entries are swept whenever the table has doubled since the last sweep.
  assert len(core._aval_table) <= max(1024, 2 * (n_live + 1)) + 1
  live = [ShapedArray((n, 9, 1), np.float32) for n in range(3000)]
  assert all(ShapedArray((n, 9, 1), np.float32) is a for n, a in enumerate(live))


def test_pickle_and_copy_give_the_interned_aval():
  a = ShapedArray((4, 5), np.float32, True)
  assert pickle.loads(pickle.dumps(a)) is a
  assert pickle.loads(pickle.dumps(a, protocol=0)) is a
  assert copy.copy(a) is a and copy.deepcopy(a) is a
  assert copy.deepcopy([a, a]) == [a, a]
  assert hash(pickle.loads(pickle.dumps(a))) == hash(a)


class _Tagged(ShapedArray):
  """A subclass with one more field (subclasses are not interned)."""
  __slots__ = ("tag",)

  def __new__(cls, shape, dtype, weak_type=False, sharding=None, tag=None):
    self = super().__new__(cls, shape, dtype, weak_type, sharding)
    self.tag = tag
    return self

  def __getnewargs__(self):
    return (*super().__getnewargs__(), self.tag)


def test_subclasses_are_not_interned():
  a, b = _Tagged((3,), np.float32, tag="a"), _Tagged((3,), np.float32, tag="b")
  assert type(a) is _Tagged and a is not b and (a.tag, b.tag) == ("a", "b")
  assert a.shape == (3,) and a.dtype == np.float32 and a.weak_type is False
  assert a == a and hash(a) == hash(ShapedArray((3,), np.float32))
  plain = ShapedArray((3,), np.float32)
  assert plain is not a and type(plain) is ShapedArray
  c = pickle.loads(pickle.dumps(a))
  assert type(c) is _Tagged and c is not a and c.tag == "a" and c.shape == (3,)
  d = copy.copy(b)
  assert type(d) is _Tagged and d.tag == "b"


def test_shapes_that_are_not_integers_are_kept_uninterned():
  a = ShapedArray((2.5,), np.float32)  # no array has it; kept as given, as before interning
  assert a.shape == (2.5,) and a is not ShapedArray((2.5,), np.float32)
  assert a == ShapedArray((2.5,), np.float32)


def test_concurrent_construction_gives_one_object_per_key():
  keys = [((n, 3), dt, w) for n in range(40) for dt in (np.float32, np.int32) for w in (0, 1)]
  n_threads = 8
  barrier = threading.Barrier(n_threads)
  results, errors = [None] * n_threads, []

  def work(i):
    try:
      for _ in range(10):
        barrier.wait()
        # Avals made and dropped in turn: inserts race with each other and with the
        # replacement of dead entries.
        for _ in range(5):
          avals = [ShapedArray(*k) for k in keys]
          if not all(ShapedArray(*k) is a for k, a in zip(keys, avals)):
            errors.append("two objects for one key in one thread")
        del avals
        barrier.wait()  # every entry is dead now: all threads race to replace each
        results[i] = [ShapedArray(*k) for k in keys]
        barrier.wait()
        if i == 0:
          for objs in zip(*results):
            if not all(o is objs[0] for o in objs):
              errors.append(f"two objects for {objs[0]} in two threads")
        barrier.wait()
        results[i] = None
    except Exception as e:  # noqa: BLE001 (reported below)
      errors.append(repr(e))
      barrier.abort()

  interval = sys.getswitchinterval()
  sys.setswitchinterval(1e-6)
  try:
    threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    for t in threads:
      t.start()
    for t in threads:
      t.join()
  finally:
    sys.setswitchinterval(interval)
  assert not errors, errors[:3]
  # Every live entry of the table maps its key to an aval with those fields.
  for key, ref in list(core._aval_table.items()):
    a = ref()
    if a is not None:
      assert (a.shape, a.dtype, a.weak_type) == key[:3] and hash(a) == hash(key)


def test_jit_outputs_share_their_inputs_avals():
  f = xjax.jit(lambda a: a + 1)
  g = xjax.jit(lambda a: a * 2)
  x = jnp.ones(3)
  y = f(x)
  assert xjax.typeof(y) is xjax.typeof(x)
  assert xjax.typeof(f(y)) is xjax.typeof(g(y)) is xjax.typeof(x)
  assert xjax.typeof(jnp.asarray(np.zeros(3, np.float32))) is xjax.typeof(x)
  # Outputs of two functions fed alternately: the same aval each time, and the same values
  # as computing without jit.
  a, b = f(x), g(x)
  want_a, want_b = np.full(3, 2.0), np.full(3, 2.0)
  for _ in range(4):
    a, b = f(b), g(a)
    want_a, want_b = want_b + 1, want_a * 2
    assert xjax.typeof(a) is xjax.typeof(b) is xjax.typeof(x)
  np.testing.assert_allclose(np.asarray(a), want_a)
  np.testing.assert_allclose(np.asarray(b), want_b)


def test_traced_avals_are_interned():
  jaxpr = xjax.make_jaxpr(lambda a, b: (a + b, a * 2.0, b))(jnp.ones(3), jnp.zeros(3))
  avals = [v.aval for v in (*jaxpr.jaxpr.invars, *jaxpr.jaxpr.outvars)]
  assert all(a is avals[0] for a in avals)


def test_disable_jit_applies_to_arguments_seen_before():
  # A fresh Array of a seen shape has the last call's aval: jit's memo of the last call
  # must still step aside under disable_jit (as it did when each aval was a new object).
  f = xjax.jit(lambda x: x + (0.0 if isinstance(x, xjax.core.Tracer) else 1000.0))
  x = jnp.ones(3)
  np.testing.assert_allclose(np.asarray(f(x)), 1.0)
  np.testing.assert_allclose(np.asarray(f(x)), 1.0)
  with xjax.disable_jit():
    np.testing.assert_allclose(np.asarray(f(x)), 1001.0)
    np.testing.assert_allclose(np.asarray(f(jnp.ones(3))), 1001.0)
  np.testing.assert_allclose(np.asarray(f(jnp.ones(3))), 1.0)
