"""`xjax.install_as_jax()` and `python -m xjax`: programs written for JAX run on xjax
unchanged. Each case runs in a fresh process (the import system is process-wide)."""
import subprocess
import sys
import textwrap

import pytest

from tests.clients.harness import REPO, run_under_xjax

pytestmark = pytest.mark.slow  # every test here starts fresh Python processes


def _python(code: str, *args: str):
  return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args],
                        capture_output=True, text=True, cwd=REPO, timeout=300)


def test_import_jax_resolves_to_xjax_modules():
  proc = _python("""
      import sys
      import xjax
      jax = xjax.install_as_jax()
      import jax as j2
      import jax.numpy as jnp
      from jax import lax, random
      import jax.scipy.special
      from jax.tree_util import tree_map
      assert j2 is jax is sys.modules["jax"] and jax is not xjax
      assert jnp is xjax.numpy and lax is xjax.lax and random is xjax.random
      assert jax.scipy.special is xjax.scipy.special and tree_map is xjax.tree_util.tree_map
      assert jax.jit is xjax.jit and jax.Array is xjax.Array
      # importing jax.<sub> binds it on the jax module, never on xjax's own attributes
      assert xjax._src.__name__ == "xjax._src"
      assert jax.__version__ == jax.version.__version__ == "0.10.2"
      assert jax.__version_info__ == (0, 10, 2) and xjax.__version__ != "0.10.2"
      assert xjax.install_as_jax() is jax  # idempotent
      print(jax.jit(jax.grad(lambda x: jnp.sin(x).sum()))(jnp.zeros(2)))
  """)
  assert proc.returncode == 0, proc.stderr
  assert proc.stdout.strip() == "[1. 1.]"


def test_missing_modules_and_names_say_xjax_lacks_them():
  proc = _python("""
      import xjax
      xjax.install_as_jax()
      import jax
      try:
        import jax.no_such_module
      except ModuleNotFoundError as e:
        print(type(e).__name__, e.name, "|", e)
      try:
        jax.no_such_name
      except AttributeError as e:
        print(type(e).__name__, "|", e)
      try:
        from jax._src import no_such_private_module
      except ImportError as e:
        print(type(e).__name__)
  """)
  assert proc.returncode == 0, proc.stderr
  lines = proc.stdout.splitlines()
  assert lines[0].startswith("ModuleNotFoundError jax.no_such_module | No module named "
                             "'jax.no_such_module': xjax (installed as `jax` by "
                             "xjax.install_as_jax) does not provide jax.no_such_module")
  assert lines[1].startswith("AttributeError | module 'jax' (xjax, installed by "
                             "xjax.install_as_jax) has no attribute 'no_such_name'")
  assert lines[2] == "ImportError"


def test_from_jax_src_import_falls_back_to_xjax_modules():
  # `from jax._src import X` reads X off the `jax._src` package first: an alias module must
  # still fall back to xjax._src.X for the names it lacks, and a name with no alias module is
  # xjax's own xjax._src.X.
  proc = _python("""
      import xjax
      xjax.install_as_jax()
      import jax
      from jax._src import dtypes, api_util
      import xjax._src.api_util
      assert dtypes.bfloat16 is xjax._src.dtypes.bfloat16
      assert api_util is xjax._src.api_util
      print("ok")
  """)
  assert proc.returncode == 0, proc.stderr
  assert proc.stdout.strip() == "ok"


def test_refuses_when_another_jax_is_imported():
  proc = _python("""
      import sys, types
      sys.modules["jax"] = types.ModuleType("jax")
      import xjax
      try:
        xjax.install_as_jax()
      except RuntimeError as e:
        print(e)
      assert sys.modules["jax"].__name__ == "jax" and not hasattr(sys.modules["jax"], "jit")
  """)
  assert proc.returncode == 0, proc.stderr
  assert "a module named 'jax' is already imported" in proc.stdout
  assert "python -m xjax SCRIPT" in proc.stdout


def test_python_dash_m_xjax_runs_scripts_modules_and_code(tmp_path):
  script = tmp_path / "prog.py"
  script.write_text(textwrap.dedent("""
      import sys
      import jax, jax.numpy as jnp
      import helper_module  # the script's own directory is on sys.path, as for python SCRIPT
      print(__name__, sys.argv[1:], helper_module.VALUE, float(jax.jit(jnp.sum)(jnp.ones(4))))
  """))
  (tmp_path / "helper_module.py").write_text("VALUE = 7\n")
  proc = run_under_xjax([str(script), "a", "--b"])
  assert proc.returncode == 0, proc.stderr
  assert proc.stdout.strip() == "__main__ ['a', '--b'] 7 4.0"
  proc = run_under_xjax(["-c", "import jax, sys; print(jax.numpy.arange(3).sum(), sys.argv[1:])",
                         "x"])
  assert proc.returncode == 0, proc.stderr
  assert proc.stdout.strip() == "3 ['x']"
  (tmp_path / "runme.py").write_text("import jax\nprint('module', __name__, jax.__version__)\n")
  proc = run_under_xjax(["-m", "runme"], env={"PYTHONPATH": str(tmp_path)})
  assert proc.returncode == 0, proc.stderr
  assert proc.stdout.strip() == "module __main__ 0.10.2"
  proc = run_under_xjax([])
  assert proc.returncode == 2 and "usage: python -m xjax" in proc.stderr
  failing = tmp_path / "fails.py"
  failing.write_text("import sys\nsys.exit(3)\n")
  assert run_under_xjax([str(failing)]).returncode == 3


def test_typing_annotations_accept_arrays_and_tracers():
  proc = _python("""
      import numpy as np
      import xjax
      xjax.install_as_jax()
      import jax, jax.numpy as jnp
      from jax.typing import ArrayLike, DTypeLike
      checks = [isinstance(v, ArrayLike) for v in
                (jnp.ones(2), np.ones(2), np.float32(1), 1, 2.5, True, 1j, [1], "s", None)]
      print(checks)
      print(jax.jit(lambda x: isinstance(x, ArrayLike) and isinstance(x, jax.Array))(1.0))
      print(isinstance(jax.devices()[0], jax.Device))
  """)
  assert proc.returncode == 0, proc.stderr
  assert proc.stdout.split("\n")[:3] == [
      "[True, True, True, True, True, True, True, False, False, False]", "True", "True"]


def test_random_numbers_follow_jax_default_layout():
  # JAX 0.10.2 defaults to the partitionable threefry layout; xjax's own default is the
  # original one. Under install_as_jax a program gets JAX's numbers (recorded from JAX
  # 0.10.2: jax.random.normal(jax.random.key(0), (3,))), unless the env var says otherwise.
  code = ("import jax; print(jax.config.jax_threefry_partitionable, "
          "jax.random.normal(jax.random.key(0), (3,)).tolist())")
  proc = run_under_xjax(["-c", code])
  assert proc.returncode == 0, proc.stderr
  flag, values = proc.stdout.strip().split(" ", 1)
  assert flag == "True"
  assert values == "[1.622642159461975, 2.0252647399902344, -0.4335944354534149]"
  proc = run_under_xjax(["-c", code], env={"JAX_THREEFRY_PARTITIONABLE": "0"})
  assert proc.returncode == 0, proc.stderr
  assert proc.stdout.startswith("False ")
