"""Every named-axis collective inside `jit(shard_map(...))` on a (4, 2) mesh of 8 CPU devices.

Each device holds one row of the input (the leading dimension is split over
both mesh axes, device d at mesh position (d // 2, d % 2)); the NumPy
reference computes the same collective over the rows that form each group.
The lowering of these collectives is checked against JAX's text in
tests/lax/test_parallel_collectives.py; here XLA runs them.
"""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.sharding import PartitionSpec as P

MESH_AXES = ("x", "y")


@pytest.fixture(scope="module")
def mesh():
  return xjax.make_mesh((4, 2), MESH_AXES)


def _groups(axes):
  """The device ids of each group of a collective over `axes` (members in index order)."""
  ids = np.arange(8).reshape(4, 2)
  order = [MESH_AXES.index(a) for a in axes]
  rest = [i for i in range(2) if i not in order]
  return ids.transpose(rest + order).reshape(-1, int(np.prod([ids.shape[i] for i in order])))


def _per_group(axes, fn):
  """A reference: `fn` maps a group's stacked rows to its members' results."""
  def ref(x):
    out = [None] * 8
    for group in _groups(axes):
      results = fn(x[group])
      for k, d in enumerate(group):
        out[d] = results[k]
    return np.stack(out)
  return ref


def _same(fn):
  return lambda v: np.stack([fn(v)] * len(v))


def _run(mesh, body, x):
  """`body` applied to each device's row of `x`, the results stacked by device."""
  f = xjax.shard_map(lambda a: body(a[0])[None], mesh=mesh, in_specs=P(MESH_AXES),
                     out_specs=P(MESH_AXES), check_vma=False)
  return np.asarray(xjax.jit(f)(x))


def _split(v, n, axis):
  return np.stack(np.split(v, n, axis=axis))


CASES = [
    ("psum_x", lambda a: lax.psum(a, "x"), (3,), _per_group(["x"], _same(lambda v: v.sum(0)))),
    ("psum_yx", lambda a: lax.psum(a, ("y", "x")), (3,),
     _per_group(["y", "x"], _same(lambda v: v.sum(0)))),
    ("psum_groups", lambda a: lax.psum(a, "x", axis_index_groups=[[0, 3], [1, 2]]), (2,),
     _per_group(["x"], lambda v: v[[0, 1, 1, 0]] + v[[3, 2, 2, 3]])),
    ("pmax_y", lambda a: lax.pmax(a, "y"), (3,), _per_group(["y"], _same(lambda v: v.max(0)))),
    ("pmin_xy", lambda a: lax.pmin(a, ("x", "y")), (3,),
     _per_group(["x", "y"], _same(lambda v: v.min(0)))),
    ("pmean_x", lambda a: lax.pmean(a, "x"), (3,), _per_group(["x"], _same(lambda v: v.mean(0)))),
    ("all_gather_x", lambda a: lax.all_gather(a, "x"), (2, 3),
     _per_group(["x"], _same(lambda v: v))),
    ("all_gather_xy_tiled_axis1", lambda a: lax.all_gather(a, ("x", "y"), axis=1, tiled=True),
     (2, 3), _per_group(["x", "y"], _same(lambda v: np.concatenate(list(v), axis=1)))),
    ("psum_scatter_x", lambda a: lax.psum_scatter(a, "x"), (4, 3),
     _per_group(["x"], lambda v: v.sum(0))),
    ("psum_scatter_y_tiled", lambda a: lax.psum_scatter(a, "y", scatter_dimension=1, tiled=True),
     (3, 4), _per_group(["y"], lambda v: _split(v.sum(0), 2, 1))),
    ("all_to_all_x", lambda a: lax.all_to_all(a, "x", 0, 1), (4, 3),
     _per_group(["x"], lambda v: np.stack([v[:, m].T for m in range(4)]))),
    ("all_to_all_x_tiled", lambda a: lax.all_to_all(a, "x", 1, 0, tiled=True), (2, 8),
     _per_group(["x"], lambda v: np.stack([np.concatenate([_split(v[k], 4, 1)[m]
                                                           for k in range(4)]) for m in range(4)]))),
    ("pswapaxes_y", lambda a: lax.pswapaxes(a, "y", 0), (2, 3),
     _per_group(["y"], lambda v: np.swapaxes(v, 0, 1))),
    ("ppermute_x", lambda a: lax.ppermute(a, "x", [(0, 1), (1, 2), (2, 3), (3, 0)]), (3,),
     _per_group(["x"], lambda v: np.roll(v, 1, axis=0))),
    ("ppermute_xy_partial", lambda a: lax.ppermute(a, ("x", "y"), [(0, 5), (7, 1)]), (3,),
     _per_group(["x", "y"], lambda v: np.stack([v[{5: 0, 1: 7}[m]] if m in (1, 5)
                                                else np.zeros_like(v[0]) for m in range(8)]))),
    ("pshuffle_y", lambda a: lax.pshuffle(a, "y", [1, 0]), (3,),
     _per_group(["y"], lambda v: v[[1, 0]])),
    ("pbroadcast_x", lambda a: lax.pbroadcast(a, "x", 2), (3,),
     _per_group(["x"], _same(lambda v: v[2]))),
    ("pbroadcast_xy", lambda a: lax.pbroadcast(a, ("x", "y"), 5), (3,),
     _per_group(["x", "y"], _same(lambda v: v[5]))),
    ("pcast_x", lambda a: lax.pcast(a, "x", to="varying"), (3,), lambda x: x),
    ("axis_index_x", lambda a: a + lax.axis_index("x"), (3,),
     lambda x: x + (np.arange(8) // 2)[:, None]),
    ("axis_index_y", lambda a: a + lax.axis_index("y"), (3,),
     lambda x: x + (np.arange(8) % 2)[:, None]),
    ("axis_index_yx", lambda a: a + lax.axis_index(("y", "x")), (3,),
     lambda x: x + ((np.arange(8) % 2) * 4 + np.arange(8) // 2)[:, None]),
]


@pytest.mark.parametrize("name,body,shape,ref", CASES, ids=[c[0] for c in CASES])
def test_collective_in_shard_map_matches_numpy(mesh, name, body, shape, ref):
  x = np.random.default_rng(0).integers(-5, 6, size=(8, *shape)).astype(np.float32)
  np.testing.assert_allclose(_run(mesh, body, x), ref(x), rtol=1e-6)


def test_collectives_of_integers_and_booleans(mesh):
  x = np.arange(8, dtype=np.int32).reshape(8, 1)
  np.testing.assert_array_equal(_run(mesh, lambda a: lax.psum(a, "x"), x),
                                _per_group(["x"], _same(lambda v: v.sum(0)))(x))
  out = _run(mesh, lambda a: lax.psum(a > 3, ("x", "y")), x)
  np.testing.assert_array_equal(out, np.full((8, 1), 4, np.int32))


def test_gradient_through_collectives_in_shard_map(mesh):
  x = np.random.default_rng(1).normal(size=(8, 4)).astype(np.float32)

  def loss(x):
    f = xjax.shard_map(lambda a: lax.psum_scatter(a * a, "x", scatter_dimension=1, tiled=True),
                       mesh=mesh, in_specs=P(MESH_AXES), out_specs=P(MESH_AXES),
                       check_vma=False)
    return jnp.sum(f(x))

  # The scattered pieces of all devices' sums add up to the sum of all squares
  # over each y group, counted once: d/dx = 2 x.
  np.testing.assert_allclose(xjax.jit(xjax.grad(loss))(x), 2 * x, rtol=1e-5)


def test_collectives_in_a_partly_manual_body(mesh):
  # Manual over 'x' only ('y' stays automatic): axis_index is computed in a nested
  # computation manual over 'y', as JAX lowers it.
  x = np.arange(8.0, dtype=np.float32).reshape(8, 1)
  f = xjax.shard_map(lambda a: (lax.psum(a, "x"), a + lax.axis_index("x"),
                                lax.pbroadcast(a, "x", 1), lax.all_gather(a, "x", tiled=True)),
                     mesh=mesh, in_specs=P("x"), out_specs=(P(), P("x"), P("x"), P()),
                     axis_names={"x"}, check_vma=False)
  total, shifted, bcast, gathered = (np.asarray(v) for v in xjax.jit(f)(x))
  np.testing.assert_array_equal(total, x.reshape(4, 2, 1).sum(0))
  np.testing.assert_array_equal(shifted, x + (np.arange(8) // 2)[:, None])
  np.testing.assert_array_equal(bcast, np.tile(x[2:4], (4, 1)))
  np.testing.assert_array_equal(gathered, x)
