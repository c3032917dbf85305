"""`jax._src.api` and `jax._src.tree_util` under `install_as_jax` (as JAX's api_test,
custom_api_test and tree_util_test import them), and config options as JAX's tests set them:
accepted (jax_custom_vjp3) or fixed at JAX's default (in a fresh interpreter: installing `jax`
is process-wide)."""
import subprocess
import sys

_CODE = r'''
import numpy as np
from xjax._src.jax_compat import install_as_jax
install_as_jax()
import jax
from jax._src import api, config
from jax._src.tree_util import (broadcast_flattened_prefix_with_treedef, default_registry,
                                dispatch_registry, prefix_errors)

assert api.jit is jax.jit and api.vmap is jax.vmap and api.grad is jax.grad
assert api.jacfwd is jax.jacfwd and api.device_put is jax.device_put
basis = api._std_basis([0., (np.zeros(3), np.zeros((3, 4)))])
assert basis[0].shape == (16,) and basis[1][0].shape == (16, 3)
assert basis[1][1].shape == (16, 3, 4)
np.testing.assert_array_equal(api._std_basis(np.zeros(3)), np.eye(3))
leaves, prefix = jax.tree.flatten((1, 2))
full = jax.tree.structure((0, [0, 0]))
assert broadcast_flattened_prefix_with_treedef(leaves, prefix, full) == [1, 2, 2]
assert dispatch_registry.flatten({"a": 1})[0] == default_registry.flatten({"a": 1})[0]
assert len(prefix_errors((1,), (2, 3))) == 1
assert config.custom_vjp3.value is False and config.remat3.value is False
with config.custom_vjp3(True):  # accepted: xjax's one custom_vjp either way
  assert config.custom_vjp3.value is True
try:
  with config.use_direct_linearize(False):  # a fixed option: another value raises
    raise AssertionError("use_direct_linearize=False accepted")
except NotImplementedError:
  pass
print("ok")
'''


def test_private_api_and_tree_util_aliases():
  out = subprocess.run([sys.executable, "-c", _CODE], capture_output=True, text=True,
                       timeout=300)
  assert out.returncode == 0, out.stderr
  assert out.stdout.strip().endswith("ok")


_CORE_CODE = r'''
from xjax._src.jax_compat import install_as_jax
install_as_jax()
import jax, jax.numpy as jnp
from jax._src import core

@jax.jit
def f():
  with core.eval_context():  # eager inside jit
    assert jnp.add(1, 1) == 2
  return jnp.zeros(())
f()
assert isinstance(jax.lax.create_token(), core.Token)
assert issubclass(core.UnexpectedTracerError, Exception)
print("ok")
'''


def test_private_core_aliases():
  out = subprocess.run([sys.executable, "-c", _CORE_CODE], capture_output=True, text=True,
                       timeout=300)
  assert out.returncode == 0, out.stderr
