"""xjax.scipy.spatial.transform.Rotation and Slerp against SciPy: every conversion (Euler
sequences intrinsic and extrinsic, gimbal lock against JAX goldens), composition,
application, mean, indexing; jit and vmap against eager; gradients against finite
differences; pytree structure; errors."""
import warnings

import numpy as np
import pytest
from scipy.spatial.transform import Rotation as SRotation
from scipy.spatial.transform import Slerp as SSlerp

import xjax
import xjax.numpy as jnp
from xjax.scipy.spatial.transform import Rotation, Slerp
from xjax.test_util import check_grads

TOL = dict(rtol=1e-12, atol=1e-12)


@pytest.fixture
def quats(rng):
  q = rng.normal(size=(8, 4))
  q[0], q[1] = [0, 0, 0, -1.0], [0, 0.6, 0, -0.8]  # the identity as -1, and w < 0
  return q


def test_conversions_match_scipy(quats, x64):
  r, s = Rotation.from_quat(quats), SRotation.from_quat(quats)
  np.testing.assert_allclose(r.as_quat(), quats / np.linalg.norm(quats, axis=-1, keepdims=True),
                             **TOL)
  np.testing.assert_allclose(r.as_matrix(), s.as_matrix(), **TOL)
  np.testing.assert_allclose(r.as_rotvec(), s.as_rotvec(), **TOL)
  np.testing.assert_allclose(r.as_rotvec(degrees=True), s.as_rotvec(degrees=True), rtol=1e-12,
                             atol=1e-10)
  np.testing.assert_allclose(r.as_mrp(), s.as_mrp(), **TOL)
  np.testing.assert_allclose(r.magnitude(), s.magnitude(), **TOL)
  np.testing.assert_allclose(r.as_quat(canonical=True), s.as_quat(canonical=True), **TOL)
  np.testing.assert_allclose(r.as_quat(scalar_first=True), s.as_quat(scalar_first=True), **TOL)
  np.testing.assert_allclose(Rotation.from_matrix(s.as_matrix()).as_matrix(), s.as_matrix(), **TOL)
  np.testing.assert_allclose(Rotation.from_rotvec(s.as_rotvec()).as_matrix(), s.as_matrix(), **TOL)
  np.testing.assert_allclose(Rotation.from_rotvec(s.as_rotvec(degrees=True), degrees=True)
                             .as_matrix(), s.as_matrix(), **TOL)
  np.testing.assert_allclose(Rotation.from_mrp(s.as_mrp()).as_matrix(), s.as_matrix(), **TOL)
  assert r.as_matrix().dtype == np.float64
  with xjax._src.config.enable_x64(False):
    assert Rotation.from_quat(quats).as_matrix().dtype == np.float32


def test_edge_conversions(x64):
  # tiny and zero rotation vectors (series branches), half turns, and matrices picking
  # each branch of Markley's method
  rotvecs = np.array([[0.0, 0, 0], [1e-5, -2e-5, 0], [np.pi, 0, 0], [0, 0, -np.pi], [0.3, 2, -1]])
  s = SRotation.from_rotvec(rotvecs)
  np.testing.assert_allclose(Rotation.from_rotvec(rotvecs).as_matrix(), s.as_matrix(), **TOL)
  np.testing.assert_allclose(Rotation.from_quat(s.as_quat()).as_rotvec()[:2], rotvecs[:2], **TOL)
  np.testing.assert_allclose(Rotation.from_quat(s.as_quat()).magnitude(), s.magnitude(), **TOL)
  matrices = np.array([np.eye(3), np.diag([1.0, -1, -1]), np.diag([-1.0, 1, -1]),
                       np.diag([-1.0, -1, 1])])
  np.testing.assert_allclose(Rotation.from_matrix(matrices).as_quat(canonical=True),
                             SRotation.from_matrix(matrices).as_quat(canonical=True), **TOL)
  assert not np.isnan(Rotation.from_rotvec(np.zeros(3)).as_quat()).any()


@pytest.mark.parametrize("seq", ["xyz", "zyx", "yxz", "XYZ", "ZYX", "YXZ", "zxz", "xyx", "ZXZ",
                                 "YZY"])
def test_euler_matches_scipy(seq, quats, x64):
  s = SRotation.from_quat(quats)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)  # SciPy's gimbal lock warning (the identity)
    angles = s.as_euler(seq)
  out = Rotation.from_quat(quats).as_euler(seq)
  wrapped = np.remainder(out - angles + np.pi, 2 * np.pi) - np.pi  # pi and -pi are one angle
  np.testing.assert_allclose(wrapped, 0, atol=1e-12)
  np.testing.assert_allclose(np.rad2deg(out), Rotation.from_quat(quats).as_euler(seq, degrees=True),
                             **TOL)
  np.testing.assert_allclose(Rotation.from_euler(seq, angles).as_matrix(), s.as_matrix(), **TOL)
  np.testing.assert_allclose(Rotation.from_euler(seq, np.rad2deg(angles), degrees=True).as_matrix(),
                             s.as_matrix(), **TOL)


@pytest.mark.parametrize("seq", ["x", "Z", "xy", "YX", "zy"])
def test_euler_fewer_axes(seq, rng, x64):
  angles = rng.uniform(-3, 3, size=(4, len(seq)))
  np.testing.assert_allclose(Rotation.from_euler(seq, angles).as_matrix(),
                             SRotation.from_euler(seq, angles).as_matrix(), **TOL)
  single = Rotation.from_euler("z", 90, degrees=True)
  assert single.single
  np.testing.assert_allclose(single.as_quat(), [0, 0, np.sqrt(0.5), np.sqrt(0.5)], **TOL)


def test_euler_gimbal_lock_matches_jax(x64):
  # Golden values from jax.scipy.spatial.transform (JAX 0.10.2, x64): in gimbal lock the
  # angle at index 2 is set to 0, and a middle angle of pi wraps to -pi.
  angles = np.array([[10.0, 90, 20], [10, -90, 20], [30, 0, 40], [30, 180, 40]])
  golden = {
      "xyz": [[-10, 90, 0], [30, -90, 0], [30, 0, 40], [-150, 0, -140]],
      "XYZ": [[30, 90, 0], [-10, -90, 0], [30, 0, 40], [-150, 0, -140]],
      "zxz": [[10, 90, 20], [-170, 90, -160], [70, 0, 0], [-10, -180, 0]],
      "YZY": [[10, 90, 20], [-170, 90, -160], [70, 0, 0], [-10, -180, 0]],
  }
  for seq, expected in golden.items():
    out = Rotation.from_euler(seq, angles, degrees=True).as_euler(seq, degrees=True)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(Rotation.from_euler(seq, out, degrees=True).as_matrix(),
                               SRotation.from_euler(seq, angles, degrees=True).as_matrix(), **TOL)


def test_compose_apply_inv_mean_match_scipy(quats, rng, x64):
  r, s = Rotation.from_quat(quats), SRotation.from_quat(quats)
  np.testing.assert_allclose((r * r[::-1]).as_matrix(), (s * s[::-1]).as_matrix(), **TOL)
  np.testing.assert_allclose((r[2] * r).as_matrix(), (s[2] * s).as_matrix(), **TOL)
  np.testing.assert_allclose(r.inv().as_matrix(), s.inv().as_matrix(), **TOL)
  vectors = rng.normal(size=(8, 3))
  for inverse in [False, True]:
    np.testing.assert_allclose(r.apply(vectors, inverse=inverse),
                               s.apply(vectors, inverse=inverse), **TOL)
    np.testing.assert_allclose(r.apply(vectors[0], inverse), s.apply(vectors[0], inverse), **TOL)
    np.testing.assert_allclose(r[3].apply(vectors, inverse), s[3].apply(vectors, inverse), **TOL)
  weights = rng.uniform(size=8)
  np.testing.assert_allclose(r.mean().as_matrix(), s.mean().as_matrix(), **TOL)
  np.testing.assert_allclose(r.mean(weights).as_matrix(), s.mean(weights).as_matrix(), **TOL)


def test_indexing_len_identity_concatenate_random(quats, x64):
  r = Rotation.from_quat(quats)
  assert len(r) == 8 and not r.single and r[1].single and len(r[2:5]) == 3
  np.testing.assert_allclose(r[np.array([4, 0])].as_quat(), r.as_quat()[np.array([4, 0])])
  both = Rotation.concatenate([r[0], r[1:4], r])
  assert both.quat.shape == (12, 4)
  np.testing.assert_allclose(both.as_quat()[1:4], r.as_quat()[1:4])
  np.testing.assert_array_equal(Rotation.identity().as_quat(), [0, 0, 0, 1])
  assert Rotation.identity().as_quat().dtype == np.float64
  assert Rotation.identity(dtype=np.float32).as_quat().dtype == np.float32
  np.testing.assert_array_equal(Rotation.identity(3).as_matrix(), np.broadcast_to(np.eye(3), (3, 3, 3)))
  rand = Rotation.random(xjax.random.key(0), 200)
  assert rand.quat.shape == (200, 4)
  np.testing.assert_allclose(np.linalg.norm(rand.quat, axis=-1), 1, rtol=1e-12)
  assert abs(np.mean(rand.as_matrix()[:, 2, 2])) < 0.2  # uniform on SO(3): E[R_zz] = 0
  assert Rotation.random(xjax.random.key(1)).single


def test_slerp_matches_scipy(quats, x64):
  times = np.array([0.0, 0.5, 1.5, 4, 4.5, 6, 7, 9])
  s_slerp = SSlerp(times, SRotation.from_quat(quats))
  slerp = Slerp.init(times, Rotation.from_quat(quats))
  query = np.array([0.0, 0.2, 0.5, 1.0, 3.9, 4.5, 6.5, 9.0])
  np.testing.assert_allclose(slerp(query).as_matrix(), s_slerp(query).as_matrix(), **TOL)
  single = slerp(2.0)
  assert single.single
  np.testing.assert_allclose(single.as_matrix(), s_slerp(2.0).as_matrix(), **TOL)
  assert slerp.timedelta.shape == (7,) and slerp.rotvecs.shape == (7, 3)
  np.testing.assert_allclose(Slerp.init([0, 1], Rotation.from_quat(quats[:2]))(np.array([0, 1.0]))
                             .as_matrix(), SRotation.from_quat(quats[:2]).as_matrix(), **TOL)


def test_jit_and_vmap_of_array_functions(quats, rng):
  quats = quats.astype(np.float32)
  vectors = rng.normal(size=(8, 3)).astype(np.float32)
  f = lambda q, v: Rotation.from_quat(q).apply(v, inverse=True)
  np.testing.assert_allclose(xjax.jit(f)(quats, vectors), f(quats, vectors), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(xjax.vmap(f)(quats, vectors), f(quats, vectors), rtol=1e-5, atol=1e-6)
  g = lambda q: Rotation.from_quat(q).as_euler("ZXZ")
  np.testing.assert_allclose(xjax.jit(g)(quats), g(quats), rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(xjax.vmap(g)(quats), g(quats), rtol=1e-5, atol=1e-5)
  h = lambda t: Slerp.init(np.arange(8.0), Rotation.from_quat(quats))(t).as_quat()
  times = np.array([0.3, 2.5, 6.9], np.float32)
  np.testing.assert_allclose(xjax.jit(h)(times), h(times), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(xjax.vmap(h)(times), h(times), rtol=1e-5, atol=1e-6)


def test_rotation_and_slerp_are_namedtuple_pytrees(quats):
  r = Rotation.from_quat(quats)
  leaves, treedef = xjax.tree_util.tree_flatten(r)
  assert len(leaves) == 1 and leaves[0] is r.quat
  assert isinstance(xjax.tree_util.tree_unflatten(treedef, leaves), Rotation)
  slerp = Slerp.init(np.arange(8.0), r)
  assert len(xjax.tree_util.tree_leaves(slerp)) == 4
  assert Rotation._fields == ("quat",)
  assert Slerp._fields == ("times", "timedelta", "rotations", "rotvecs")


# tree_util reads a namedtuple node with tuple's own iteration and length: Rotation
# overrides __len__ (TypeError for a single rotation).
def test_rotation_arguments_to_jit_and_vmap(quats):
  quats = quats.astype(np.float32)
  r = Rotation.from_quat(quats)
  np.testing.assert_allclose(xjax.jit(lambda r: r.as_matrix())(r), r.as_matrix(), rtol=1e-6)
  np.testing.assert_allclose(xjax.jit(lambda r: r.as_matrix())(r[0]), r[0].as_matrix(), rtol=1e-6)
  np.testing.assert_allclose(xjax.vmap(lambda r: r.as_rotvec())(r), r.as_rotvec(), rtol=1e-5,
                             atol=1e-6)
  slerp = Slerp.init(np.arange(8.0), r)
  np.testing.assert_allclose(xjax.jit(lambda s, t: s(t).as_quat())(slerp, 2.5),
                             slerp(2.5).as_quat(), rtol=1e-6)


def test_grads(quats, rng, x64):
  q, v = quats[2:5], rng.normal(size=(3, 3))
  check_grads(lambda q, v: Rotation.from_quat(q).apply(v), (q, v), order=1)
  check_grads(lambda q, v: Rotation.from_quat(q).apply(v, inverse=True), (q, v), order=1,
              modes=("rev",))
  check_grads(lambda rv: Rotation.from_rotvec(rv).as_rotvec(), (np.array([0.3, -1.0, 0.5]),),
              order=1)
  check_grads(lambda q: Rotation.from_quat(q).as_euler("xyz"), (q,), order=1, modes=("rev",))
  check_grads(lambda m: Rotation.from_matrix(m).as_quat(), (SRotation.from_quat(q).as_matrix(),),
              order=1, modes=("rev",))
  check_grads(lambda t: Slerp.init(np.arange(5.0), Rotation.from_quat(quats[:5]))(t).as_quat(),
              (np.array([0.4, 2.7]),), order=1, modes=("rev",))
  # a zero rotation vector has finite derivatives
  grad = xjax.grad(lambda rv: Rotation.from_rotvec(rv).as_matrix()[0, 1])(np.zeros(3))
  np.testing.assert_allclose(grad, [0, 0, -1], atol=1e-12)  # R[0, 1] = -angle about z


def test_errors(quats):
  r = Rotation.from_quat(quats)
  with pytest.raises(ValueError, match="Expected axis specification to be a non-empty string"):
    Rotation.from_euler("xyzx", np.zeros(4))
  with pytest.raises(ValueError, match="Expected axis specification"):
    Rotation.from_euler("", np.zeros(1))
  with pytest.raises(ValueError, match=r"Expected axes from `seq` to be from \['x', 'y', 'z'\]"):
    Rotation.from_euler("xYz", np.zeros(3))
  with pytest.raises(ValueError, match="Expected consecutive axes to be different, got xxy"):
    Rotation.from_euler("xxy", np.zeros(3))
  with pytest.raises(ValueError):
    Rotation.from_euler("xy", np.zeros(3))
  with pytest.raises(ValueError, match="Expected 3 axes, got xy."):
    r.as_euler("xy")
  with pytest.raises(ValueError, match="Expected axes from `seq`"):
    r.as_euler("xwz")
  with pytest.raises(ValueError, match="Expected consecutive axes to be different"):
    r.as_euler("XZZ")
  with pytest.raises(TypeError, match="Single rotation is not subscriptable."):
    r[0][0]
  with pytest.raises(TypeError, match=r"Single rotation has no len\(\)."):
    len(r[0])
  with pytest.raises(ValueError, match="Expected `weights` to be 1 dimensional"):
    r.mean(np.ones((8, 1)))
  with pytest.raises(ValueError, match="got 3 values and 8 rotations"):
    r.mean(np.ones(3))
  with pytest.raises(TypeError, match="`rotations` must be a `Rotation` instance."):
    Slerp.init([0, 1], quats[:2])
  with pytest.raises(ValueError, match="at least 2 rotations"):
    Slerp.init([0], r[:1])
  with pytest.raises(ValueError, match="Expected times to be specified in a 1 dimensional array"):
    Slerp.init(np.zeros((8, 1)), r)
  with pytest.raises(ValueError, match="got 8 rotations and 3 timestamps"):
    Slerp.init([0, 1, 2], r)
  with pytest.raises(ValueError, match="`times` must be at most 1-dimensional."):
    Slerp.init(np.arange(8), r)(np.zeros((2, 2)))
