"""A sharding's XLA forms (JAX's `_to_xla_hlo_sharding` / `_to_sdy_sharding`): a GSPMDSharding
rebuilt from a NamedSharding's HloSharding places every element where the NamedSharding does,
and the Shardy attributes parse in a module."""
import pytest

import xjax
from xjax._src import backend
from xjax._src.sharding.shardings import GSPMDSharding
from xjax.sharding import NamedSharding, PartitionSpec as P

SPECS = [P("x", "y"), P("y", "x"), P("x"), P(None, "y"), P(("x", "y")), P()]


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_gspmd_from_hlo_sharding_places_as_named(spec):
  mesh = xjax.make_mesh((4, 2), ("x", "y"))
  ns = NamedSharding(mesh, spec)
  gs = GSPMDSharding(ns._device_assignment, ns._to_xla_hlo_sharding(2))
  assert gs.devices_indices_map((8, 4)) == ns.devices_indices_map((8, 4))
  assert gs.is_fully_replicated == (spec == P())
  proto = GSPMDSharding(ns._device_assignment, ns._to_xla_hlo_sharding(2).to_proto())
  assert proto == gs


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_sdy_attributes_parse(spec):
  mesh = xjax.make_mesh((4, 2), ("x", "y"))
  ns = NamedSharding(mesh, spec)
  gs = GSPMDSharding(ns._device_assignment, ns._to_xla_hlo_sharding(2))
  text = gs._to_sdy_sharding(2)
  assert text.startswith("#sdy.sharding<mesh<")
  backend.parse_module(
      "func.func @f(%a: tensor<8x4xf32> {sdy.sharding = " + text + "}) -> tensor<8x4xf32> "
      "{ return %a : tensor<8x4xf32> }")
  assert ns._to_sdy_sharding(2) == ns.sdy_text(2)


def test_get_replicated():
  devices = xjax.devices()[:4]
  rep = GSPMDSharding.get_replicated(devices)
  assert rep.is_fully_replicated and rep.device_set == set(devices)
  assert all(idx == (slice(None),) for idx in rep.devices_indices_map((6,)).values())
