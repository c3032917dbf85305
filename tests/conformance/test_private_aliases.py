"""The `jax._src.<sub>` modules JAX's own test files import resolve under `install_as_jax` to
xjax's objects (in a fresh interpreter: installing `jax` is process-wide)."""
import subprocess
import sys

import pytest

_CODE = r'''
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
import numpy as np
import xjax
from xjax._src.jax_compat import install_as_jax
install_as_jax()
import jax
from jax._src import mesh as mesh_lib, op_shardings, sharding_impls, lib
from jax._src.sharding import common_devices_indices_map, IndivisibleError
from jax._src.named_sharding import DuplicateSpecError
from jax._src.random import threefry2x32, prng, rbg
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 2), ("x", "y"))
assert isinstance(mesh, mesh_lib.Mesh) and mesh_lib.AxisType.Explicit
s = sharding_impls.NamedSharding(mesh, P("x"))
m = common_devices_indices_map(s, (4, 2))
assert sorted(idx[0].start for idx in m.values()) == [0, 0, 2, 2]
h_rep = sharding_impls.NamedSharding(mesh, P())._to_xla_hlo_sharding(2)
h_x = s._to_xla_hlo_sharding(2)
assert op_shardings.is_hlo_sharding_replicated(h_rep)
assert not op_shardings.is_hlo_sharding_replicated(h_x)
assert op_shardings.are_hlo_shardings_equal(h_x, s._to_xla_hlo_sharding(2))
assert not op_shardings.are_hlo_shardings_equal(h_x, h_rep)
single = sharding_impls.make_single_device_sharding(jax.devices()[1])
assert single.device_set == {jax.devices()[1]}
assert lib.version >= (0, 10) and lib.xla_client.OpSharding
key_data = threefry2x32.threefry_seed(np.uint32(7))
assert np.asarray(threefry2x32.threefry_2x32(key_data, np.arange(4, dtype=np.uint32))).shape == (4,)
assert prng.threefry_prng_impl.name == "threefry2x32"
assert rbg.rbg_prng_impl.name == "rbg" and rbg.unsafe_rbg_prng_impl.name == "unsafe_rbg"
print("ok")
'''


@pytest.mark.slow
def test_private_aliases_resolve_to_xjax():
  out = subprocess.run([sys.executable, "-c", _CODE], capture_output=True, text=True,
                       timeout=300)
  assert out.stdout.strip() == "ok", out.stderr[-3000:]
