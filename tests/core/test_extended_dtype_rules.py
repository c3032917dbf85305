"""A user-defined extended dtype described, as in JAX, by rules with `physical_element_aval`:
its arrays live as their physical data through abstract evaluation, jit, vmap, scan and the
structural primitives (JAX's lax_test CustomElementTypesTest, on xjax)."""
import types

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src import core
from xjax._src import dtypes
from xjax._src.jax_compat.private.interpreters import mlir as private_mlir
from xjax.interpreters import batching
from xjax.interpreters import mlir


class _PairRules:
  @staticmethod
  def physical_element_aval(dtype):
    return core.ShapedArray((2,), np.dtype(np.uint32))


class PairTy(dtypes.ExtendedDType):
  type = dtypes.extended
  name = "pair"
  _rules = _PairRules

  def __hash__(self):
    return hash(PairTy)

  def __eq__(self, other):
    return type(other) is PairTy

  def __repr__(self):
    return self.name

  __str__ = __repr__


make_p = core.Primitive("make_pairs")
flip_p = core.Primitive("flip_pairs")
count_p = core.Primitive("count_pairs")
make_p.def_abstract_eval(lambda *, shape: core.ShapedArray(shape, PairTy()))
flip_p.def_abstract_eval(lambda x: core.ShapedArray(tuple(reversed(x.shape)), PairTy()))
count_p.def_abstract_eval(lambda x: core.ShapedArray(x.shape, np.dtype(np.float32)))
mlir.register_lowering(make_p, mlir.lower_fun(
    lambda *, shape: jnp.zeros((*shape, 2), "uint32"), False))
mlir.register_lowering(flip_p, mlir.lower_fun(lambda k: k.T, False))
mlir.register_lowering(count_p, mlir.lower_fun(
    lambda k: jnp.broadcast_to(jnp.float32(k.size), k.shape), False))
batching.defvectorized(count_p)


def make(shape):
  return make_p.bind(shape=tuple(shape))


def test_physical_layout_comes_from_the_rules():
  assert PairTy().physical_element_shape == (2,)
  assert PairTy().physical_element_dtype == np.uint32
  aval = core.ShapedArray((3, 4), PairTy())
  assert aval.str_short() == "pair[3,4]"
  assert core.physical_aval(aval) == core.ShapedArray((3, 4, 2), np.dtype(np.uint32))


def test_traced_and_compiled_through_the_physical_data():
  out = xjax.jit(lambda: count_p.bind(flip_p.bind(make((3, 4)))))()
  np.testing.assert_array_equal(out, np.full((4, 3), 12.0, np.float32))
  pairs = xjax.jit(lambda: make((3, 4)))()
  assert pairs.shape == (3, 4) and pairs.dtype == PairTy()
  assert xjax.jit(lambda x: lax.slice_in_dim(x, 1, 3))(pairs).shape == (2, 4)
  assert xjax.jit(lambda x: x.T)(pairs).shape == (4, 3)
  assert xjax.vmap(xjax.jit(count_p.bind))(pairs).shape == (3, 4)
  _, ys = xjax.jit(lambda ks: lax.scan(lambda _, k: (None, flip_p.bind(k)), None, ks))(pairs)
  assert ys.shape == (3, 4) and ys.dtype == PairTy()


def test_make_jaxpr_takes_duck_typed_arguments():
  jaxpr = xjax.make_jaxpr(lambda x: x)(types.SimpleNamespace(shape=(3,), dtype=PairTy()))
  assert jaxpr.in_avals == [core.ShapedArray((3,), PairTy())]
  jaxpr = xjax.make_jaxpr(lambda x: x)(types.SimpleNamespace(shape=[2, 5], dtype=np.float64))
  assert jaxpr.in_avals == [core.ShapedArray((2, 5), np.dtype(np.float32))]


def test_empty_of_an_extended_dtype():
  out = xjax.jit(lambda: lax.empty((2,), PairTy()))()
  assert out.shape == (2,) and out.dtype == PairTy()


def test_private_lowerings_table_is_a_view():
  prim = core.Primitive("private_lowerings_probe")
  prim.def_abstract_eval(lambda x: x)
  private_mlir._lowerings[prim] = mlir.lower_fun(lambda x: x + 1, False)
  assert prim in private_mlir._lowerings
  assert float(xjax.jit(prim.bind)(np.float32(1))) == 2.0
  del private_mlir._lowerings[prim]
  assert prim not in private_mlir._lowerings
  with pytest.raises(KeyError):
    del private_mlir._lowerings[prim]
