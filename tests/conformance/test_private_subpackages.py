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
import xjax._src.lax.linalg
assert batching.primitive_batchers is xjax.interpreters.batching.primitive_batchers
assert lax_linalg is xjax._src.lax.linalg
assert control_flow.common.join_consts
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
