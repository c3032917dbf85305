"""JAX's private Array surface (`ArrayImpl(aval, sharding, arrays, committed)`, `_arrays`,
`_npy_value`, ...), meshes (interning, reprs, the empty mesh), shard shapes and their errors,
and `Compiled.input_shardings`/`output_shardings` on 8 devices, as JAX 0.10.2 states them."""
import warnings

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src import core
from xjax._src.array import ArrayImpl
from xjax._src.sharding.shardings import IndivisibleError, common_devices_indices_map
from xjax.sharding import (AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec as P,
                           SingleDeviceSharding)

DATA = np.arange(16, dtype=np.float32).reshape(8, 2)


def _mesh(shape, names):
  return Mesh(np.array(xjax.devices()[:int(np.prod(shape))]).reshape(shape), names)


def _pieces(sharding, data=DATA, devices=None):
  index = sharding.devices_indices_map(data.shape)
  return [xjax.device_put(data[index[d]], d) for d in (devices or sharding._device_assignment)]


def test_array_impl_is_the_concrete_array_class_with_jax_name():
  x = jnp.arange(3)
  assert type(x) is ArrayImpl and type(x).__name__ == "ArrayImpl"
  assert issubclass(ArrayImpl, xjax.Array) and not issubclass(ArrayImpl, np.ndarray)
  with pytest.raises(TypeError, match="'ArrayImpl' and 'dict'"):
    x + {}


def test_array_impl_constructor_joins_single_device_arrays():
  s = NamedSharding(_mesh((4, 2), ("x", "y")), P("x", "y"))
  pieces = _pieces(s)
  out = ArrayImpl(core.ShapedArray(DATA.shape, np.float32), s, pieces[::-1], committed=True)
  assert type(out) is ArrayImpl and out.sharding == s and out.committed
  np.testing.assert_array_equal(np.asarray(out), DATA)
  assert [a.devices() for a in out._arrays] == [{d} for d in s._device_assignment]


def test_array_impl_constructor_checks_pieces_as_jax():
  aval = core.ShapedArray(DATA.shape, np.float32)
  s = NamedSharding(_mesh((1, 2), ("x", "y")), P("x", "y"))
  pieces = _pieces(s)
  with pytest.raises(ValueError, match=r"Expected 2 per-device arrays \(this is how many "
                                       r"devices are addressable by the sharding\), but got 1"):
    ArrayImpl(aval, s, pieces[:1], committed=True)
  twice = [xjax.device_put(np.asarray(pieces[0]), xjax.devices()[0])] * 2
  with pytest.raises(ValueError, match="input arrays must be from distinct devices"):
    ArrayImpl(aval, s, twice, committed=True)
  s_rows = NamedSharding(_mesh((1, 2), ("x", "y")), P("x"))
  elsewhere = [xjax.device_put(DATA, d) for d in xjax.devices()[2:4]]
  with pytest.raises(ValueError, match=r"Sharding contains devices \{0, 1\} that are not "
                                       r"present in per-device arrays. Per-device arrays "
                                       r"contain devices \{2, 3\}"):
    ArrayImpl(aval, s_rows, elsewhere, committed=True)
  ints = _pieces(s, DATA.astype(np.int32))
  with pytest.raises(ValueError, match="Input buffers to `Array` must have matching dtypes. "
                                       "Got int32, expected float32"):
    ArrayImpl(aval, s, ints, committed=True)


@pytest.mark.parametrize("sharded", [True, False])
def test_private_host_value_and_deletion(sharded):
  if sharded:
    x = xjax.device_put(DATA, NamedSharding(_mesh((4, 2), ("x", "y")), P("x", "y")))
  else:
    x = xjax.device_put(DATA, xjax.devices()[0])
  assert x._npy_value is None
  np.testing.assert_array_equal(x._value, DATA)
  np.testing.assert_array_equal(x._npy_value, DATA)
  assert len(x._arrays) == (8 if sharded else 1)
  x._check_if_deleted()
  x.delete()
  with pytest.raises(RuntimeError, match="Array has been deleted with shape=float32"):
    x._check_if_deleted()
  assert x._npy_value is None and x._arrays is None


def test_fully_replicated_shard():
  s = NamedSharding(_mesh((4, 2), ("x", "y")), P())
  x = xjax.device_put(DATA, s)
  shard = x._fully_replicated_shard()
  assert shard.shape == DATA.shape and shard.sharding.num_devices == 1
  np.testing.assert_array_equal(shard, DATA)
  split = xjax.device_put(DATA, NamedSharding(s.mesh, P("x")))
  with pytest.raises(ValueError, match="fully replicated"):
    split._fully_replicated_shard()


def test_numpy_dtype_protocol_warns_as_jax():
  x = jnp.arange(4)
  with pytest.warns(DeprecationWarning, match="Implicit conversion of an array to a dtype is "
                                              "deprecated"):
    assert x.__numpy_dtype__ == np.int32
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    np.asarray(x) + 1  # reading values does not warn


def test_meshes_are_interned_and_print_as_jax():
  a = Mesh(xjax.devices(), "x")
  b = Mesh(np.array(xjax.devices()), ("x",))
  assert a is b and a is not Mesh(xjax.devices(), "y")
  assert not a.devices.flags.writeable
  m = _mesh((1, 1), ("x", "y"))
  assert repr(m) == "Mesh(axis_sizes=(1, 1), axis_names=('x', 'y'), axis_types=(Auto, Auto))"
  assert str(m) == "Mesh('x': 1, 'y': 1, axis_types=(Auto, Auto))"
  assert "mesh=Mesh('x': 1, 'y': 1" in repr(NamedSharding(m, P()))


def test_empty_mesh_has_size_zero():
  mesh = Mesh(np.empty((), dtype=object), [])
  assert mesh.empty and mesh.size == 0
  assert repr(mesh) == "Mesh(axis_sizes=(), axis_names=())" and str(mesh) == "Mesh()"
  assert mesh.abstract_mesh.empty and mesh.abstract_mesh.size == 0
  assert AbstractMesh((), ()).empty and AbstractMesh((), ()).size == 0
  assert not _mesh((1,), ("x",)).empty and AbstractMesh((2,), ("x",)).size == 2


def test_shard_shape_and_indices_raise_indivisible_error():
  s = NamedSharding(_mesh((4, 2), ("x", "y")), P("x", "y"))
  assert s.shard_shape((8, 4)) == (2, 2)
  with pytest.raises(IndivisibleError, match=r"implies that array axis 1 is partitioned 2 "
                                             r"times, but the dimension size is 3 \(full shape: "
                                             r"\(8, 3\), per-dimension tiling factors: \[4, 2\]"):
    s.shard_shape((8, 3))
  with pytest.raises(IndivisibleError):
    s.devices_indices_map((1, 2))
  assert issubclass(IndivisibleError, ValueError)


def test_check_compatible_aval():
  mesh = _mesh((1, 1, 2), ("replica", "data", "mdl"))
  NamedSharding(mesh, P(None, "mdl")).check_compatible_aval((8, 2))
  with pytest.raises(ValueError, match=r"P\(None, 'mdl', None, None\).* is only valid for "
                                       "values of rank at least 4, but was applied to a value "
                                       "of rank 2"):
    NamedSharding(mesh, P(None, ("mdl",), None, None)).check_compatible_aval((8, 2))
  with pytest.raises(ValueError, match=r"For scalars the PartitionSpec should be P\(\)"):
    NamedSharding(_mesh((1,), ("x",)), P("x")).check_compatible_aval(())


def test_devices_indices_map_cache_is_cleared_by_clear_caches():
  s = NamedSharding(_mesh((1,), ("x",)), P())
  s.devices_indices_map((8,))
  xjax.clear_caches()
  assert common_devices_indices_map.cache_info().currsize == 0
  assert s.devices_indices_map((8,)) == {xjax.devices()[0]: (slice(None),)}
  assert common_devices_indices_map.cache_info().currsize == 1


def test_abstract_mesh_shardings_compare_by_tiles():
  mesh = _mesh((2,), ("x",))
  s1, s2 = NamedSharding(mesh.abstract_mesh, P("x")), NamedSharding(mesh.abstract_mesh, P("x"))
  assert s1 == s2 and s1.is_equivalent_to(s2, 2)
  assert not s1.is_equivalent_to(NamedSharding(mesh.abstract_mesh, P(None, "x")), 2)


def test_compiled_input_and_output_shardings():
  s = NamedSharding(_mesh((8,), ("x",)), P("x"))
  sds = xjax.ShapeDtypeStruct((16,), np.float32, sharding=s)
  c = xjax.jit(lambda x, y=None: x * 2).lower(sds).compile()
  ins, outs = c.input_shardings, c.output_shardings
  assert ins == ((s,), {}) and outs == s
  one = xjax.jit(lambda a, b: (a + b, a)).lower(1.0, b=np.ones(3, np.float32)).compile()
  d0 = SingleDeviceSharding(xjax.devices()[0])
  assert one.input_shardings == ((d0,), {"b": d0}) and one.output_shardings == (d0, d0)


def test_shape_dtype_struct_like_of_a_tracer_keeps_its_explicit_sharding():
  mesh = xjax.make_mesh((2,), ("x",), axis_types=(AxisType.Explicit,))
  x = xjax.device_put(jnp.arange(8), NamedSharding(mesh, P("x")))

  @xjax.jit
  def f(a):
    sds = xjax.ShapeDtypeStruct.like(a)
    assert sds.sharding.spec == P("x")
    return jnp.ones(sds.shape, sds.dtype, out_sharding=sds.sharding)

  with xjax.set_mesh(mesh):
    out = f(x)
  assert out.sharding.spec == P("x")
  np.testing.assert_array_equal(out, np.ones(8, np.int32))


def test_partition_specs_are_interned_and_checked():
  assert P(None, "x", "y") is P((), "x", "y") and P(["a"]) is P("a") is P(("a",))
  assert P("x", "y", "z").index("z") == 2
  with pytest.raises(ValueError, match="A tuple inside PartitionSpec cannot contain a nested "
                                       "tuple"):
    P("x", ("z", ("a",)))
  with pytest.raises(TypeError, match="Subclassing `jax.P` is prohibited"):
    type("MyP", (P,), {})


def test_gspmd_sharding_keeps_xla_sharding_text():
  from jaxlib import xla_client as xc
  from xjax._src.sharding.shardings import GSPMDSharding
  op = xc.OpSharding()
  op.type = xc.OpSharding.Type.OTHER
  op.tile_assignment_dimensions = [6, 35]
  op.iota_reshape_dims = [7, 10, 3]
  op.iota_transpose_perm = [2, 1, 0]
  s = GSPMDSharding(list(range(210)), op)
  assert "{devices=[6,35]<=[7,10,3]T(2,1,0)}" in repr(s)
  assert s._to_xla_hlo_sharding(2).get_axis_sizes() == [7, 2, 5, 3]


@pytest.mark.parametrize("spec", [P("x", None), P(None, "y"), P("x", "y")])
def test_partitionable_random_bits_stay_local_to_each_device(spec):
  from xjax._src.random import threefry
  mesh = _mesh((2, 3), ("x", "y"))
  shape = (4, 9)
  data = np.arange(36, dtype=np.uint32).reshape(shape)
  x = xjax.make_array_from_callback(shape, NamedSharding(mesh, spec), lambda i: data[i])
  f = xjax.jit(lambda x: threefry.threefry_random_bits(jnp.zeros(2, np.uint32), 32, x.shape,
                                                       True) + x)
  assert "[4,9]" not in f.lower(x).compile().as_text()
  np.testing.assert_array_equal(f(x), f(xjax.device_put(x, xjax.devices()[0])))


def test_partial_indexing_of_a_sharded_array_lays_out_as_jax():
  mesh = _mesh((2, 2, 2), ("x", "y", "z"))
  data = np.arange(32, dtype=np.float32).reshape(4, 4, 2)
  x = xjax.device_put(data, NamedSharding(mesh, P("x", "y", "z")))
  for index, spec, shard in [((slice(None), slice(1, None, 2)), P("x", None, "z"), (2, 2, 1)),
                             ((slice(None), slice(-1, None)), P("x", None, "z"), (2, 1, 1)),
                             ((slice(None, None, -1),), P("x", "y", "z"), (2, 2, 1)),
                             ((slice(0, 6),), P("x", "y", "z"), (2, 2, 1))]:
    y = x[index]
    np.testing.assert_array_equal(y, data[index])
    assert y.sharding.spec == spec and y.sharding.shard_shape(y.shape) == shard, index
  from xjax._src.numpy.indexing import IndexingStrategy, rewriting_take
  with pytest.raises(ValueError, match="static_slice with partial slices does not support"):
    rewriting_take(x, (0,), strategy=IndexingStrategy.STATIC_SLICE)
