"""`jax._src.util` under xjax (xjax/_src/jax_compat/private/util.py): JAX's small list,
tuple and function helpers that JAX's own tests import."""
import types

import numpy as np
import pytest

from xjax._src.jax_compat.private import util


def test_safe_zip_and_map_check_lengths():
  assert util.safe_zip([1, 2], "ab") == [(1, "a"), (2, "b")]
  with pytest.raises(ValueError):
    util.safe_zip([1, 2], [1])
  with pytest.raises(TypeError):
    util.safe_zip()
  assert util.safe_map(lambda a, b: a + b, (1, 2), [10, 20]) == [11, 22]
  with pytest.raises(AssertionError):
    util.safe_map(lambda a, b: a, [1], [1, 2])
  seen = []
  assert util.foreach(seen.append, [3, 4]) is None and seen == [3, 4]


def test_list_helpers():
  assert util.unzip2([(1, "a"), (2, "b")]) == ((1, 2), ("a", "b"))
  assert util.unzip2([]) == ((), ())
  assert util.unzip3([(1, 2, 3)]) == ((1,), (2,), (3,))
  assert util.split_list([1, 2, 3, 4, 5], [1, 2]) == [[1], [2, 3], [4, 5]]
  assert util.split_list_checked([1, 2, 3], [1, 2]) == [[1], [2, 3]]
  with pytest.raises(AssertionError):
    util.split_list_checked([1, 2, 3], [1])
  falses, trues = util.partition_list([True, False, True], "abc")
  assert (falses, trues) == (["b"], ["a", "c"])
  assert util.merge_lists([True, False, True], falses, trues) == ["a", "b", "c"]
  assert util.subvals((1, 2, 3), [(0, 9), (2, 8)]) == (9, 2, 8)
  assert util.concatenate([[1], [2, 3]]) == [1, 2, 3]
  assert util.unflatten([1, 2, 3], [2, 1]) == [[1, 2], [3]]
  assert util.tuple_insert((1, 2), 1, 7) == (1, 7, 2)
  assert util.tuple_delete((1, 2, 3), 0) == (2, 3)
  assert util.tuple_update((1, 2, 3), 2, 0) == (1, 2, 0)
  assert list(util.stable_unique([3, 1, 3, 2, 1])) == [3, 1, 2]


def test_function_helpers():
  f = lambda x, y, z: x * 100 + y * 10 + z
  assert util.curry(f)(1)(2, 3) == 123 and util.curry(f)(1, 2, 3)() == 123
  assert util.prod([2, 3, 4]) == 24 and util.prod([]) == 1
  assert util.canonicalize_axis(-1, 3) == 2
  with pytest.raises(ValueError):
    util.canonicalize_axis(3, 3)
  assert util.canonicalize_axis_tuple(None, 2) == (0, 1)
  assert util.ceil_of_ratio(7, 2) == 4
  assert util.moveaxis(np.zeros((2, 3, 4)), 0, -1).shape == (3, 4, 2)
  calls = []

  @util.cache(max_size=None)
  def g(x):
    calls.append(x)
    return x * 2
  assert g(2) == 4 and g(2) == 4 and calls == [2]
  util.clear_all_caches()
  assert g(2) == 4 and calls == [2, 2]
  make = lambda k: util.HashableFunction(lambda: k, (k,))
  assert make(1) == make(1) and hash(make(1)) == hash(make(1)) and make(1) != make(2)


def test_toposort_puts_parents_first():
  def node(name, *parents):
    return types.SimpleNamespace(name=name, parents=list(parents))
  a = node("a")
  b = node("b", a)
  c = node("c", a, b)
  order = [n.name for n in util.toposort([c])]
  assert order == ["a", "b", "c"]
  assert util.toposort([]) == []


@pytest.mark.slow
def test_jax_src_util_resolves_to_it():
  import subprocess, sys
  code = ("import xjax; xjax.install_as_jax(); from jax._src.util import safe_map, unzip2; "
          "from jax._src import util; print(util.split_list([1, 2], [1]))")
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
  assert out.stdout.strip() == "[[1], [2]]"
