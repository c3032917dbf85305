"""Rotations in 3 dimensions (mirrors `jax.scipy.spatial.transform`).

A `Rotation` holds unit quaternions in scalar-last order ``(x, y, z, w)``,
shape ``(4,)`` for a single rotation or ``(N, 4)`` for N of them. Every
conversion is written on the last axis with ``...`` indexing, so it works for
both shapes (and any further leading axes) and under `vmap`. `Rotation` and
`Slerp` are NamedTuples, hence pytrees, as in JAX. The helpers are jitted
(inline), so an eager call compiles one program rather than one per operation.
"""
from __future__ import annotations

import functools
import re
import typing

import numpy as np

import xjax.numpy as jnp
from xjax._src.jit import jit
from xjax._src.numpy.util import promote_dtypes_inexact
from xjax._src.random import distributions

_AXIS_INDEX = {"x": 0, "y": 1, "z": 2}


def _check_seq(seq: str, num_axes_ok: bool) -> bool:
  """Validates an Euler axis sequence; returns whether it is extrinsic (lower case)."""
  if not num_axes_ok:
    raise ValueError("Expected axis specification to be a non-empty "
                     f"string of upto 3 characters, got {seq}")
  intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
  extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
  if not (intrinsic or extrinsic):
    raise ValueError("Expected axes from `seq` to be from ['x', 'y', "
                     f"'z'] or ['X', 'Y', 'Z'], got {seq}")
  if any(a == b for a, b in zip(seq[:-1], seq[1:], strict=True)):
    raise ValueError(f"Expected consecutive axes to be different, got {seq}")
  return extrinsic


_jit = functools.partial(jit, inline=True)


def _norm(v):
  return jnp.sqrt(jnp.sum(v * v, axis=-1))


@_jit
def _normalize(quat):
  return quat / _norm(quat)[..., None]


@_jit
def _compose(p, q):
  """The Hamilton product p q of scalar-last quaternions (broadcast over leading axes)."""
  pv, pw = p[..., :3], p[..., 3:]
  qv, qw = q[..., :3], q[..., 3:]
  vector = pw * qv + qw * pv + jnp.cross(pv, qv)
  scalar = pw * qw - jnp.sum(pv * qv, axis=-1, keepdims=True)
  return jnp.concatenate([vector, scalar], axis=-1)  # both have the broadcast batch shape


def _elementary(axis: int, angle):
  """The quaternion of a rotation by `angle` (any shape) about basis vector `axis`."""
  half = angle / 2
  zero = jnp.zeros_like(half)
  parts = [zero, zero, zero, jnp.cos(half)]
  parts[axis] = jnp.sin(half)
  return jnp.stack(parts, axis=-1)


@functools.partial(jit, static_argnames=("axes", "extrinsic", "degrees"), inline=True)
def _from_euler(angles, axes, extrinsic: bool, degrees: bool):
  """Composes the elementary rotations: each after the previous (extrinsic) or in its frame."""
  if degrees:
    angles = jnp.deg2rad(angles)
  quat = _elementary(axes[0], angles[..., 0])
  for n, axis in enumerate(axes[1:], start=1):
    elementary = _elementary(axis, angles[..., n])
    quat = _compose(elementary, quat) if extrinsic else _compose(quat, elementary)
  return quat


@_jit
def _as_matrix(quat):
  x, y, z, w = (quat[..., i] for i in range(4))
  xx, yy, zz, ww = x * x, y * y, z * z, w * w
  xy, xz, xw, yz, yw, zw = x * y, x * z, x * w, y * z, y * w, z * w
  rows = [[xx - yy - zz + ww, 2 * (xy - zw), 2 * (xz + yw)],
          [2 * (xy + zw), -xx + yy - zz + ww, 2 * (yz - xw)],
          [2 * (xz - yw), 2 * (yz + xw), -xx - yy + zz + ww]]
  return jnp.stack([jnp.stack(row, axis=-1) for row in rows], axis=-2)


@_jit
def _apply(quat, vectors, inverse):
  matrix = _as_matrix(quat)
  matrix = jnp.where(jnp.asarray(inverse)[..., None, None], jnp.swapaxes(matrix, -1, -2), matrix)
  return jnp.matmul(matrix, jnp.asarray(vectors)[..., None])[..., 0]


@_jit
def _from_matrix(matrix):
  """Markley's method: of four algebraically equal formulas, use the best conditioned."""
  m = lambda i, j: matrix[..., i, j]
  trace = m(0, 0) + m(1, 1) + m(2, 2)
  candidates = []
  for i in range(3):
    j, k = (i + 1) % 3, (i + 2) % 3
    q = [None] * 4
    q[i] = 1 - trace + 2 * m(i, i)
    q[j] = m(j, i) + m(i, j)
    q[k] = m(k, i) + m(i, k)
    q[3] = m(k, j) - m(j, k)
    candidates.append(jnp.stack(q, axis=-1))
  candidates.append(jnp.stack([m(2, 1) - m(1, 2), m(0, 2) - m(2, 0), m(1, 0) - m(0, 1), 1 + trace],
                              axis=-1))
  choice = jnp.argmax(jnp.stack([m(0, 0), m(1, 1), m(2, 2), trace], axis=-1), axis=-1)
  quat = jnp.take_along_axis(jnp.stack(candidates, axis=-2), choice[..., None, None], axis=-2)
  return _normalize(quat[..., 0, :])


@_jit
def _from_rotvec(rotvec):
  angle2 = jnp.sum(rotvec * rotvec, axis=-1, keepdims=True)
  small = angle2 <= 1e-6  # angle <= 1e-3: Taylor series of sin(angle / 2) / angle
  angle = jnp.sqrt(jnp.where(small, 1.0, angle2))  # keeps gradients finite at 0
  scale = jnp.where(small, 0.5 - angle2 / 48 + angle2 * angle2 / 3840, jnp.sin(angle / 2) / angle)
  half_cos = jnp.where(small, 1 - angle2 / 8 + angle2 * angle2 / 384, jnp.cos(angle / 2))
  return jnp.concatenate([scale * rotvec, half_cos], axis=-1)


@functools.partial(jit, static_argnames=("degrees",), inline=True)
def _as_rotvec(quat, degrees):
  quat = jnp.where(quat[..., 3:] < 0, -quat, quat)  # w >= 0, so 0 <= angle <= pi
  angle = 2 * jnp.arctan2(_norm(quat[..., :3]), quat[..., 3])
  angle2 = angle * angle
  small = angle <= 1e-3  # Taylor series of angle / sin(angle / 2)
  safe_angle = jnp.where(small, 1.0, angle)
  scale = jnp.where(small, 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880,
                    safe_angle / jnp.sin(safe_angle / 2))
  if degrees:
    scale = jnp.rad2deg(scale)
  return scale[..., None] * quat[..., :3]


@functools.partial(jit, static_argnames=("axes", "extrinsic"), inline=True)
def _as_euler(quat, axes, extrinsic: bool):
  """Euler angles by Bernardes and Viollet (2022), for a static axis sequence.

  In gimbal lock (middle angle 0 or pi up to 1e-7) the angle at index 2 is
  set to 0 and the whole rotation is carried by index 0.
  """
  i, j, k = axes if extrinsic else axes[::-1]
  proper = i == k  # proper Euler angles (e.g. 'zxz') rather than Tait-Bryan ('xyz')
  if proper:
    k = 3 - i - j
  sign = (i - j) * (j - k) * (k - i) // 2  # parity of the permutation (i, j, k)
  q = lambda n: quat[..., n]
  if proper:
    a, b, c, d = q(3), q(i), q(j), q(k) * sign
  else:
    a, b, c, d = q(3) - q(j), q(i) + q(k) * sign, q(j) + q(3), q(k) * sign - q(i)
  middle = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
  half_sum, half_diff = jnp.arctan2(b, a), jnp.arctan2(d, c)
  eps = 1e-7
  lock_zero = jnp.abs(middle) <= eps
  lock_pi = (jnp.abs(middle - np.pi) <= eps) & ~lock_zero
  locked = lock_zero | lock_pi
  first = jnp.where(lock_zero, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
  outer_first, outer_third = half_sum - half_diff, half_sum + half_diff
  if extrinsic:
    angle0 = jnp.where(locked, first, outer_first)
    angle2 = jnp.where(locked, 0.0, outer_third)
  else:
    angle0 = jnp.where(locked, first, outer_third)
    angle2 = jnp.where(locked, 0.0, outer_first)
  if not proper:
    if extrinsic:
      angle2 = angle2 * sign
    else:
      angle0 = angle0 * sign
    middle = middle - np.pi / 2
  angles = jnp.stack([angle0, middle, angle2], axis=-1).astype(quat.dtype)
  return jnp.remainder(angles + np.pi, 2 * np.pi) - np.pi


@_jit
def _make_canonical(quat):
  """The one of q, -q whose first nonzero entry of (w, x, y, z) is positive."""
  x, y, z, w = (quat[..., n] for n in range(4))
  negate = (w < 0) | ((w == 0) & ((x < 0) | ((x == 0) & ((y < 0) | ((y == 0) & (z < 0))))))
  return jnp.where(negate[..., None], -quat, quat)


class Rotation(typing.NamedTuple):
  """Rotation(s) in 3 dimensions, stored as unit quaternions ``quat`` (scalar last).

  ``quat`` has shape ``(4,)`` for a single rotation or ``(N, 4)`` for N
  rotations. Build one with the ``from_*`` class methods (the constructor
  takes a quaternion as is, without normalizing it). A NamedTuple, hence a
  pytree with ``quat`` as its one child.

  Mirrors `jax.scipy.spatial.transform.Rotation`.
  """
  quat: typing.Any

  @classmethod
  def concatenate(cls, rotations: typing.Sequence):
    """One `Rotation` holding all of `rotations` (single or stacked) in order."""
    return cls(jnp.concatenate([jnp.atleast_2d(r.quat) for r in rotations]))

  @classmethod
  def from_euler(cls, seq: str, angles, degrees: bool = False):
    """From Euler angles about the axes `seq`.

    Args:
      seq: 1 to 3 characters from 'xyz' (extrinsic: axes of the fixed frame) or
        from 'XYZ' (intrinsic: axes of the rotating frame), no axis twice in a row.
      angles: shape ``(..., len(seq))`` (a scalar for a single axis); radians,
        or degrees if `degrees`.

    Raises:
      ValueError: an invalid `seq`, or `angles` whose last axis is not ``len(seq)``.
    """
    extrinsic = _check_seq(seq, 1 <= len(seq) <= 3)
    angles, = promote_dtypes_inexact(jnp.atleast_1d(angles))
    if angles.shape[-1] != len(seq):
      raise ValueError(f"Expected angles of shape (..., {len(seq)}) for seq {seq!r}, "
                       f"got shape {angles.shape}")
    axes = tuple(_AXIS_INDEX[a] for a in seq.lower())
    return cls(_from_euler(angles, axes, extrinsic, degrees))

  @classmethod
  def from_matrix(cls, matrix):
    """From rotation matrices of shape ``(3, 3)`` or ``(N, 3, 3)``."""
    matrix, = promote_dtypes_inexact(jnp.asarray(matrix))
    return cls(_from_matrix(matrix))

  @classmethod
  def from_mrp(cls, mrp):
    """From Modified Rodrigues Parameters, shape ``(3,)`` or ``(N, 3)``."""
    mrp, = promote_dtypes_inexact(jnp.asarray(mrp))
    norm2_plus_1 = jnp.sum(mrp * mrp, axis=-1, keepdims=True) + 1
    return cls(jnp.concatenate([2 * mrp, 2 - norm2_plus_1], axis=-1) / norm2_plus_1)

  @classmethod
  def from_quat(cls, quat):
    """From quaternions ``(x, y, z, w)``, shape ``(4,)`` or ``(N, 4)``; normalized."""
    quat, = promote_dtypes_inexact(jnp.asarray(quat))
    return cls(_normalize(quat))

  @classmethod
  def from_rotvec(cls, rotvec, degrees: bool = False):
    """From rotation vectors (axis times angle), shape ``(3,)`` or ``(N, 3)``."""
    rotvec, = promote_dtypes_inexact(jnp.asarray(rotvec))
    if degrees:
      rotvec = jnp.deg2rad(rotvec)
    return cls(_from_rotvec(rotvec))

  @classmethod
  def identity(cls, num: int | None = None, dtype=float):
    """The identity rotation: single if `num` is None, else `num` of them (JAX allows None only)."""
    quat = jnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype)
    return cls(quat if num is None else jnp.tile(quat, (num, 1)))

  @classmethod
  def random(cls, random_key, num: int | None = None):
    """Rotations drawn uniformly from SO(3) with `random_key`: single if `num` is None.

    JAX raises NotImplementedError here; xjax normalizes Gaussian quaternions.
    """
    shape = (4,) if num is None else (num, 4)
    return cls.from_quat(distributions.normal(random_key, shape))

  def __getitem__(self, indexer):
    """The rotation(s) at `indexer`. Raises TypeError for a single rotation."""
    if self.single:
      raise TypeError("Single rotation is not subscriptable.")
    return Rotation(self.quat[indexer])

  def __len__(self):
    """The number of rotations. Raises TypeError for a single rotation."""
    if self.single:
      raise TypeError("Single rotation has no len().")
    return self.quat.shape[0]

  def __mul__(self, other) -> Rotation:
    """The composition: `other` applied first, then `self` (normalized)."""
    return Rotation.from_quat(_compose(self.quat, other.quat))

  def apply(self, vectors, inverse: bool = False):
    """Rotates `vectors` (shape ``(3,)`` or ``(N, 3)``, broadcast against the rotations).

    With `inverse`, applies the inverse rotation(s). Returns the rotated
    vectors, shape ``(3,)`` or ``(N, 3)``.
    """
    return _apply(self.quat, vectors, inverse)

  def as_euler(self, seq: str, degrees: bool = False):
    """Euler angles about the 3 axes `seq` ('xyz'-style extrinsic, 'XYZ'-style intrinsic).

    Returns shape ``(3,)`` or ``(N, 3)``: the first and last angles in
    [-pi, pi), the middle one in [0, pi] (proper Euler) or [-pi/2, pi/2]
    (Tait-Bryan); degrees if `degrees`. In gimbal lock the last angle is 0.

    Raises:
      ValueError: `seq` is not 3 valid axes.
    """
    if len(seq) != 3:
      raise ValueError(f"Expected 3 axes, got {seq}.")
    extrinsic = _check_seq(seq, True)
    angles = _as_euler(self.quat, tuple(_AXIS_INDEX[a] for a in seq.lower()), extrinsic)
    return jnp.rad2deg(angles) if degrees else angles

  def as_matrix(self):
    """Rotation matrices, shape ``(3, 3)`` or ``(N, 3, 3)``."""
    return _as_matrix(self.quat)

  def as_mrp(self):
    """Modified Rodrigues Parameters (norm at most 1), shape ``(3,)`` or ``(N, 3)``."""
    sign = jnp.where(self.quat[..., 3:] < 0, -1.0, 1.0).astype(self.quat.dtype)
    return sign * self.quat[..., :3] / (1 + sign * self.quat[..., 3:])

  def as_rotvec(self, degrees: bool = False):
    """Rotation vectors (angle in [0, pi] times unit axis), shape ``(3,)`` or ``(N, 3)``."""
    return _as_rotvec(self.quat, degrees)

  def as_quat(self, canonical: bool = False, scalar_first: bool = False):
    """The quaternions; with `canonical` w >= 0 (ties broken as SciPy does), with
    `scalar_first` in ``(w, x, y, z)`` order."""
    quat = _make_canonical(self.quat) if canonical else self.quat
    return jnp.roll(quat, 1, axis=-1) if scalar_first else quat

  def inv(self):
    """The inverse rotation(s) (conjugate quaternions)."""
    return Rotation(self.quat * jnp.array([-1, -1, -1, 1], dtype=self.quat.dtype))

  def magnitude(self):
    """The rotation angles in radians, in [0, pi]; shape ``()`` or ``(N,)``."""
    return 2 * jnp.arctan2(_norm(self.quat[..., :3]), jnp.abs(self.quat[..., 3]))

  def mean(self, weights=None):
    """The (weighted) mean rotation: the dominant eigenvector of sum_i w_i q_i q_i^T.

    Raises:
      ValueError: `weights` is not 1-D or not one per rotation.
      TypeError: a single rotation.
    """
    quat = self.quat
    if weights is None:
      w = jnp.ones(quat.shape[0], dtype=quat.dtype)
    else:
      w = jnp.asarray(weights, dtype=quat.dtype)
    if w.ndim != 1:
      raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
    if w.shape[0] != len(self):
      raise ValueError("Expected `weights` to have number of values equal to number of "
                       f"rotations, got {w.shape[0]} values and {len(self)} rotations.")
    return Rotation(_mean(quat, w))

  @property
  def single(self) -> bool:
    """Whether this holds one rotation (``quat`` of shape ``(4,)``)."""
    return self.quat.ndim == 1


class Slerp(typing.NamedTuple):
  """Spherical linear interpolation between key rotations at increasing times.

  Build it with `Slerp.init(times, rotations)`; calling it with times gives
  the interpolated `Rotation`. A NamedTuple (pytree) of the key `times`,
  `timedelta` (their differences), `rotations` (all keys but the last) and
  `rotvecs` (the rotation vector from each key to the next).

  Mirrors `jax.scipy.spatial.transform.Slerp`.
  """
  times: typing.Any
  timedelta: typing.Any
  rotations: Rotation
  rotvecs: typing.Any

  @classmethod
  def init(cls, times, rotations: Rotation):
    """A Slerp through `rotations` (N >= 2) at the 1-D, increasing `times` (N of them; the
    order is not checked).

    Raises:
      TypeError: `rotations` is not a `Rotation`.
      ValueError: fewer than 2 rotations; `times` not 1-D or not one per rotation.
    """
    if not isinstance(rotations, Rotation):
      raise TypeError("`rotations` must be a `Rotation` instance.")
    if rotations.single or len(rotations) == 1:
      raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
    times = jnp.asarray(times, dtype=rotations.quat.dtype)
    if times.ndim != 1:
      raise ValueError("Expected times to be specified in a 1 dimensional array, "
                       f"got {times.ndim} dimensions.")
    if times.shape[0] != len(rotations):
      raise ValueError("Expected number of rotations to be equal to number of timestamps "
                       f"given, got {len(rotations)} rotations and {times.shape[0]} timestamps.")
    starts = Rotation(rotations.quat[:-1])
    steps = starts.inv() * Rotation(rotations.quat[1:])
    return cls(times=times, timedelta=jnp.diff(times), rotations=starts,
               rotvecs=steps.as_rotvec())

  def __call__(self, times):
    """The rotation(s) at `times` (a scalar gives a single rotation, a 1-D array N of them).

    Times outside the key range extrapolate from the first or last interval.

    Raises:
      ValueError: `times` has more than 1 dimension.
    """
    t = jnp.asarray(times, dtype=self.times.dtype)
    if t.ndim > 1:
      raise ValueError("`times` must be at most 1-dimensional.")
    single = t.ndim == 0
    result = Rotation(_slerp(self.times, self.timedelta, self.rotations.quat, self.rotvecs,
                             jnp.atleast_1d(t)))
    return result[0] if single else result


@_jit
def _mean(quat, weights):
  """The eigenvector of the largest eigenvalue of sum_i w_i q_i q_i^T."""
  _, vectors = jnp.linalg.eigh((weights[:, None] * quat).T @ quat)
  return vectors[:, -1]


@_jit
def _slerp(key_times, timedelta, key_quats, rotvecs, t):
  """The quaternions at the 1-D times `t`: rotate from the key at or before each time
  along that interval's rotation vector, by the fraction of the interval elapsed."""
  ind = jnp.maximum(jnp.searchsorted(key_times, t) - 1, 0)
  alpha = (t - key_times[ind]) / timedelta[ind]
  step = _from_rotvec(rotvecs[ind] * alpha[:, None])
  return _normalize(_compose(key_quats[ind], step))
