"""equinox 0.13.8 on xjax: its scripts (tests/clients/scripts/equinox_*.py, written for JAX)
run under `python -m xjax` and print what they printed under real JAX 0.10.2."""
import pytest

from tests.clients.harness import assert_matches, golden, require, run_under_xjax, script_output

pytestmark = pytest.mark.slow  # every test here starts fresh Python processes


@pytest.fixture
def _equinox_and_optax():
  require("equinox", "optax")


def test_private_and_core_names_equinox_uses(tmp_path):
  """What equinox takes from JAX beyond the public API, checked without equinox: the
  `jax._src` aliases (traceback_util, dtypes, dispatch), `jax.core.Atom`, `Trace.main`,
  `jax.lib.__version__`."""
  script = tmp_path / "uses_private_names.py"
  script.write_text("""
import os, sys
import jax, jax.numpy as jnp
import jax._src.traceback_util as traceback_util
import jax._src.dispatch
from jax._src.dtypes import TypePromotionError
from xjax._src import core
here = sys._getframe()
assert traceback_util.include_frame(here)  # a user's frame, until its folder is excluded
traceback_util.register_exclusion(os.path.dirname(os.path.abspath(__file__)))
assert not traceback_util.include_frame(here)
# JAX waits for effect tokens at exit with wait_for_tokens; xjax keeps none between calls.
assert not hasattr(jax._src.dispatch, "wait_for_tokens")
with jax.numpy_dtype_promotion("strict"):
  try:
    jnp.ones(2, jnp.float32) + jnp.ones(2, jnp.int32)
    raise SystemExit("no TypePromotionError")
  except TypePromotionError:
    pass
import jax.lib, jaxlib.version
assert jax.lib.__version__ == jaxlib.version.__version__  # equinox's tests read it
jaxpr = jax.make_jaxpr(lambda x: x * 2.0)(1.0).jaxpr
assert all(isinstance(a, jax.core.Atom) for a in jaxpr.eqns[0].invars)
def f(x):
  trace = core.current_trace()
  assert trace.main is trace.tag
  return x * 2
print(jax.jvp(f, (1.0,), (1.0,))[1])
""")
  proc = run_under_xjax([str(script)])
  assert proc.returncode == 0, proc.stderr
  assert proc.stdout.strip() == "2.0"


@pytest.mark.usefixtures("_equinox_and_optax")
def test_equinox_mlp_trains_as_under_jax():
  """eqx.nn.MLP trained 300 steps by optax.adam under filter_jit/filter_value_and_grad."""
  assert_matches(script_output("equinox_mlp"), golden("equinox_mlp"), rtol=1e-4, atol=1e-6)


@pytest.mark.usefixtures("_equinox_and_optax")
def test_equinox_module_basics_match_jax():
  """Modules with static fields, tree_at, filter/partition/combine, eqx.nn layers with
  keys, filter_vmap, filter_grad, filter_jit, filter_eval_shape."""
  assert_matches(script_output("equinox_module"), golden("equinox_module"))


@pytest.mark.usefixtures("_equinox_and_optax")
def test_equinox_advanced_features_match_jax():
  """equinox.internal.while_loop (and its grad, vmap), eqx.error_if raising
  EquinoxRuntimeError, filter_jvp / custom_jvp / custom_vjp / checkpoint / hessian /
  jacfwd / jacrev / closure_convert / pure_callback / make_jaxpr, stateful BatchNorm,
  attention, norms, ConvTranspose, LSTM under scan, scan over stacked layers,
  serialisation."""
  assert_matches(script_output("equinox_advanced"), golden("equinox_advanced"))
