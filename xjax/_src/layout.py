"""Device memory layouts of arrays and the `Format` pairing a layout with a sharding
(mirrors `jax.experimental.layout`).

A `Layout` names the order of an array's dimensions in memory, from major (slowest
varying) to minor, with an optional tiling. xjax always lays arrays out in the default
row-major order: these classes are the values JAX programs build and compare (flax maps
over `Format` objects in sharding annotations); xjax's `jit` does not take layouts.
"""
from __future__ import annotations

from xjax._src.sharding.shardings import Sharding


class AutoLayoutSingleton:
  """`Layout.AUTO`: lets the compiler choose the layout; prints as ``AUTO``."""

  def __repr__(self):
    return "AUTO"


AutoLayout = AutoLayoutSingleton()


class Layout:
  """A device memory layout (mirrors `jax.experimental.layout.Layout`).

  Args:
    major_to_minor: the dimensions of the array, from the most major in memory to the
      most minor (``(0, 1)`` is row-major for a 2-d array).
    tiling: optional tiles, each a tuple of ints, or None.
    sub_byte_element_size_in_bits: the element size for types narrower than a byte
      (0: the dtype's own).

  Layouts compare and hash by these three fields.
  """

  AUTO = AutoLayout

  def __init__(self, major_to_minor: tuple[int, ...],
               tiling: tuple[tuple[int, ...], ...] | None = None,
               sub_byte_element_size_in_bits: int = 0):
    self.major_to_minor = tuple(major_to_minor)
    self.tiling = None if tiling is None else tuple(tuple(t) for t in tiling)
    self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

  def _key(self):
    return self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits

  def __repr__(self):
    return (f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
            f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})")

  def __hash__(self):
    return hash(self._key())

  def __eq__(self, other):
    return isinstance(other, Layout) and self._key() == other._key()

  def update(self, **kwargs) -> Layout:
    """A copy with the given fields (``major_to_minor``, ``tiling``,
    ``sub_byte_element_size_in_bits``) replaced."""
    fields = dict(zip(("major_to_minor", "tiling", "sub_byte_element_size_in_bits"),
                      self._key(), strict=True))
    unknown = set(kwargs) - set(fields)
    if unknown:
      raise TypeError(f"Layout.update() got unexpected keyword arguments {sorted(unknown)}")
    fields.update(kwargs)
    return Layout(**fields)

  def check_compatible_aval(self, aval_shape: tuple[int, ...]) -> None:
    """Raises ValueError unless the layout has one entry per dimension of `aval_shape`."""
    if len(self.major_to_minor) != len(aval_shape):
      raise ValueError(
          "Length of major_to_minor and the rank of the value should match. Got "
          f"major_to_minor={self.major_to_minor} and shape={tuple(aval_shape)}")


class Format:
  """A layout paired with a sharding (mirrors `jax.experimental.layout.Format`).

  Args:
    layout: a `Layout`, `Layout.AUTO` or None.
    sharding: a `Sharding` or None; required when `layout` is a `Layout`.

  Raises:
    ValueError: `layout` is a `Layout` and `sharding` is None.
    TypeError: `layout` or `sharding` has another type.
  """

  __slots__ = ("layout", "sharding")

  def __init__(self, layout: Layout | AutoLayoutSingleton | None = None,
               sharding: Sharding | None = None):
    if not isinstance(layout, (Layout, AutoLayoutSingleton, type(None))):
      raise TypeError(
          "Invalid value received for the layout argument. Expected values are `None`, "
          f"`Layout.AUTO` or an instance of `Layout`. Got {layout} of type {type(layout)}")
    if not isinstance(sharding, (Sharding, type(None))):
      raise TypeError(
          "Invalid value received for the sharding argument. Expected values are `None` or "
          f"an instance of `jax.Sharding`. Got {sharding} of type {type(sharding)}")
    if isinstance(layout, Layout) and sharding is None:
      raise ValueError(
          f"Sharding has to be concrete when layout is of type {type(layout)}. Please pass a "
          "`jax.sharding.NamedSharding` or `jax.sharding.SingleDeviceSharding` to the "
          f"sharding argument. Got sharding {sharding}")
    self.layout = layout
    self.sharding = sharding

  def __repr__(self):
    return f"Format(layout={self.layout}, sharding={self.sharding})"

  def __hash__(self):
    return hash((self.layout, self.sharding))

  def __eq__(self, other):
    return (isinstance(other, Format) and self.layout == other.layout
            and self.sharding == other.sharding)
