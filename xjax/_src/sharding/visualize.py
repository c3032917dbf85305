"""Looking at shardings: `inspect_array_sharding` and `visualize_(array_)sharding`.

`inspect_array_sharding` binds `inspect_sharding`, an effectful primitive with
no outputs. Eagerly it calls back with the array's sharding. Under jit the
sharding is only known once XLA's partitioner has chosen it, so in a program
over several devices the lowering emits XLA's ``InspectSharding`` custom
call, through which the partitioner calls back at compile time (and removes
the call); in a one-device program the callback runs at lowering time with
a replicated sharding, as in JAX.

`visualize_sharding` draws which devices hold which block of a 1-D or 2-D
array as a table made with `rich`, the way JAX draws it (same sizes,
paddings and colors, so the printed text is the same).
"""
from __future__ import annotations

import numpy as np

from xjax._src import backend
from xjax._src import core
from xjax._src import dispatch
from xjax._src import effects
from xjax._src import tree_util
from xjax._src.sharding import shardings as sh
from xjax._src.sharding.mesh import Mesh
from xjax._src.sharding.partition_spec import PartitionSpec

# ----------------------------------------------------------------------------
# inspect_array_sharding


def inspect_array_sharding(value, *, callback) -> None:
  """Calls `callback(sharding)` with the sharding of each array in `value`, as early as
  it is known.

  Eagerly that is now, with the array's `.sharding`. Inside `jit` it is when
  the function is compiled (not on later cached calls): in a program over
  several devices with the `NamedSharding` (over the program's mesh, axes
  Auto) or `GSPMDSharding` that XLA's partitioner chose for that value; in a
  one-device program with a replicated `GSPMDSharding`. Under `vmap` it sees
  the whole batched value; under differentiation, the primal.

  Args:
    value: a pytree of Arrays (or tracers).
    callback: a function of one `Sharding`; its return value is ignored.

  Raises:
    AttributeError: eagerly, a leaf that is not an Array (it has no sharding).

  Mirrors `jax.debug.inspect_array_sharding`.
  """
  for leaf in tree_util.tree_leaves(value):
    inspect_sharding_p.bind(leaf, callback=callback)


inspect_sharding_p = core.Primitive("inspect_sharding", multiple_results=True)
inspect_sharding_p.effects = lambda **params: frozenset({effects.debug_effect})


@inspect_sharding_p.def_impl
def _inspect_sharding_impl(value, *, callback):
  callback(value.sharding)
  return []


@inspect_sharding_p.def_abstract_eval
def _inspect_sharding_abstract_eval(aval, *, callback):
  return []


@inspect_sharding_p.def_jvp
def _inspect_sharding_jvp(primals, tangents, *, callback):
  inspect_sharding_p.bind(*primals, callback=callback)
  return [], []


@inspect_sharding_p.def_batch
def _inspect_sharding_batch(axis_data, args, dims, *, callback):
  inspect_sharding_p.bind(*args, callback=callback)  # the whole batched value, as JAX does
  return [], []


@inspect_sharding_p.def_lowering
def _inspect_sharding_lowering(ctx, value, *, callback):
  spmd_module = ctx.module.spmd
  if spmd_module is None:
    # One device: nothing to partition, the value is whole there.
    ndim = len(ctx.avals_in[0].shape)
    callback(sh.GSPMDSharding((dispatch.default_device(),),
                              sh.TileDescription((1,) * ndim, (0,), False)))
    return []
  # JAX reports shardings over a mesh of the program's devices with Auto axes.
  mesh = Mesh(spmd_module.mesh.devices, spmd_module.mesh.axis_names)
  on_sharding = _sharding_callback(callback, mesh, len(ctx.avals_in[0].shape))
  key, keepalive = backend.inspect_sharding_key(on_sharding)
  _keepalive.append(keepalive)
  config = "".join(f"\\{b:02X}" for b in key)
  ctx.op("stablehlo.custom_call", [value], [value.type],
         f'call_target_name = "InspectSharding", api_version = 1 : i32, '
         f'backend_config = "{config}", has_side_effect = true')
  return []


# jaxlib's key holds a borrowed pointer to the function the partitioner calls:
# it must outlive every compilation of the module (one small entry per program).
_keepalive: list = []


def _sharding_callback(callback, mesh: Mesh, ndim: int):
  """What the partitioner calls with XLA's choice (an OpSharding): `callback` with the
  NamedSharding over `mesh` that lays the value out so (P() in a manual body), else
  a GSPMDSharding."""
  def on_sharding(op_sharding):
    described = backend.describe_sharding(op_sharding)
    if described is None:  # manual (inside shard_map): each device holds its own value
      return callback(sh.NamedSharding(mesh, PartitionSpec()))
    dims, devices, replicate_last = described
    tiles = (sh.TileDescription(dims, devices, replicate_last) if dims
             else sh.TileDescription((1,) * ndim, (0,), False))
    return callback(sh.named_sharding_for_tiles(mesh, tiles, ndim))
  return on_sharding


# ----------------------------------------------------------------------------
# visualize_sharding


def visualize_array_sharding(arr, *, use_color: bool = True, scale: float = 1.0,
                             min_width: int = 9, max_width: int = 80, color_map=None) -> None:
  """Prints the layout of `arr` over its devices (see `visualize_sharding`).

  Eagerly it prints now; inside `jit` when the function is compiled, with the
  sharding XLA chose (`inspect_array_sharding`).

  Mirrors `jax.debug.visualize_array_sharding`.
  """
  shape = arr.shape
  inspect_array_sharding(arr, callback=lambda s: visualize_sharding(
      shape, s, use_color=use_color, scale=scale, min_width=min_width, max_width=max_width,
      color_map=color_map))


def visualize_sharding(shape, sharding, *, use_color: bool = True, scale: float = 1.0,
                       min_width: int = 9, max_width: int = 80, color_map=None) -> None:
  """Prints a table of which devices hold each block of an array of `shape` under `sharding`.

  One cell per block, labelled with the platform and the ids of the devices
  holding it (e.g. ``CPU 0,4``), sized in proportion to the block (10 lines
  tall for the whole array, times `scale`; widths between `min_width` and
  `max_width` characters). Printed to standard output with `rich`, in
  colors (`color_map`, default matplotlib's ``tab20b`` when matplotlib is
  installed) when `use_color` and the terminal has them, else with lines.

  Args:
    shape: a 1-D or 2-D shape.
    sharding: a `Sharding`.
    use_color, scale, min_width, max_width: as above.
    color_map: a function from a float in [0, 1] to an RGB(A) tuple of floats.

  Raises:
    ValueError: a shape of rank other than 1 or 2; `rich` is not installed.

  Mirrors `jax.debug.visualize_sharding`.
  """
  try:
    import rich.align
    import rich.box
    import rich.console
    import rich.padding
    import rich.style
    import rich.table
  except ModuleNotFoundError:
    raise ValueError("`visualize_sharding` requires `rich` to be installed.") from None
  shape = tuple(shape)
  if len(shape) not in (1, 2):
    raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
  console = rich.console.Console(width=max_width)
  use_color = use_color and console.color_system is not None
  if use_color and not color_map:
    try:
      import matplotlib
      color_map = matplotlib.colormaps["tab20b"]
    except ModuleNotFoundError:
      use_color = False

  blocks = _blocks(shape, sharding)
  rows = 1 + max(r for r, _ in blocks)
  cols = 1 + max(c for _, c in blocks)
  kind = next(iter(sharding.device_set)).platform.upper()
  base_height = int(10 * scale)
  base_width = int(base_height * (shape[1] if len(shape) == 2 else 1) / shape[0])
  colors = _colors(color_map, rows * cols) if use_color else None

  table = rich.table.Table(show_header=False, show_lines=not use_color, padding=0,
                           highlight=not use_color, pad_edge=False,
                           box=None if use_color else rich.box.SQUARE)
  for r in range(rows):
    cells = []
    for c in range(cols):
      ids, height, width = blocks[r, c]
      label = f"{kind} " + ",".join(str(i) for i in sorted(ids))
      width = min(max(int(width * base_width * 2.5), min_width), max_width)
      height = 1 if height is None else int(height * base_height)
      left, extra = divmod(width - len(label) - 2, 2)
      top, extra_v = divmod(height - 2, 2)
      pad = [top, left + extra, top + extra_v, left]  # top, right, bottom, left
      style = rich.style.Style()
      if use_color:
        bg = _hex(next(colors))
        style = rich.style.Style(bgcolor=bg, color=_text_color(bg))
        pad = [p + 1 for p in pad]
      cells.append(rich.padding.Padding(
          rich.align.Align(label, "center", vertical="middle"),
          tuple(max(p, 0) for p in pad), style=style))
    table.add_row(*cells)
  console.print(table, end="\n\n")


def _blocks(shape, sharding) -> dict:
  """(row, col) of each block -> [device ids, height fraction (None in 1-D), width fraction].

  A block's position along a dimension is its start over its size; a 1-D
  array is one row.
  """
  blocks: dict = {}
  for device, index in sharding.devices_indices_map(shape).items():
    spans = [(0, n) if s.start is None and s.stop is None else (s.start, s.stop - s.start)
             for s, n in zip(index, shape)]
    position = tuple(start // size for start, size in spans)
    fractions = [size / n for (_, size), n in zip(spans, shape)]
    if len(shape) == 1:
      position, fractions = (0, *position), [None, *fractions]
    block = blocks.setdefault(position, [set(), *fractions])
    block[0].add(device.id)
  return blocks


def _colors(color_map, n: int):
  """`color_map` at n evenly spaced points, visited with a stride of about n/2 so that
  neighbouring blocks differ."""
  values = np.linspace(0, 1, n)
  i = 0
  for _ in range(n):
    yield color_map(values[i])
    i = (i + n // 2 + (n % 2 == 0)) % n


def _hex(color) -> str:
  if isinstance(color, str):
    return color
  r, g, b = (int(v * 255) for v in color[:3])
  return f"#{r:02X}{g:02X}{b:02X}"


def _text_color(background: str) -> str:
  """Black on light backgrounds, white on dark ones (perceived luminance)."""
  r, g, b = (int(background[i:i + 2], 16) for i in (1, 3, 5))
  return "#000000" if r * 0.299 + g * 0.587 + b * 0.114 > 186 else "#ffffff"
