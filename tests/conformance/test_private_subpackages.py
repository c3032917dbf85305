"""`from jax._src.<package> import <submodule>` under `install_as_jax` gets the submodule
(the alias module if there is one, else xjax's own), not an attribute of xjax's package of
the same name (in a fresh interpreter: installing `jax` is process-wide)."""
import subprocess
import sys

import pytest

_CODE = r'''
import xjax
from xjax._src.jax_compat import install_as_jax
install_as_jax()
import jax
from jax._src.interpreters import batching
from jax._src.lax import linalg as lax_linalg
from jax._src.lax import control_flow
from xjax._src.lax.linalg import lu as lu_module, qr as qr_module
assert batching.primitive_batchers is xjax.interpreters.batching.primitive_batchers
# JAX's one linalg module: public names and the private ones JAX's tests call.
assert lax_linalg.lu is xjax.lax.linalg.lu and lax_linalg._lu_python is lu_module._lu_python
assert lax_linalg.geqrf is qr_module.geqrf and lax_linalg.ormqr is xjax.lax.linalg.ormqr
assert control_flow.common.join_consts
from jax._src import core
assert core.check_jaxpr is xjax._src.core.typecheck_jaxpr and core.JaxprTypeError
try:
  from jax._src.lax import not_a_module
except ImportError:
  pass
else:
  raise AssertionError("not_a_module imported")
print("ok")
'''


@pytest.mark.slow
def test_submodules_of_alias_packages():
  out = subprocess.run([sys.executable, "-c", _CODE], capture_output=True, text=True,
                       timeout=300)
  assert out.stdout.strip() == "ok", out.stderr[-3000:]
