"""`import xjax` leaves the heavy families unimported until first use (issue 34), as JAX's
lazy loaders do; reading the public name imports them."""
import json
import subprocess
import sys

import pytest

LAZY = ["xjax._src.nn", "xjax._src.image", "xjax._src.scipy", "xjax._src.numpy.linalg",
        "xjax._src.numpy.fft", "xjax._src.lax.linalg", "xjax._src.checkify",
        "xjax.example_libraries"]

_PROBE = """
import json, sys
import xjax
before = {f: sorted(m for m in sys.modules if m == f or m.startswith(f + ".")) for f in FAMILIES}
import xjax.numpy as jnp
x = jnp.eye(2)
used = [float(xjax.nn.relu(-1.0)), float(jnp.linalg.det(x)), float(jnp.fft.fft(x)[0, 0].real),
        float(xjax.lax.linalg.cholesky(x)[1, 1]), float(xjax.scipy.special.gammaln(1.0)),
        float(xjax.image.resize(x, (2, 2), "nearest")[0, 0])]
print(json.dumps({"before": before, "used": used,
                  "dir": [n in dir(xjax) for n in ("nn", "image")] + ["linalg" in dir(jnp)]}))
"""


@pytest.mark.slow
def test_import_xjax_leaves_the_heavy_families_for_first_use():
  out = subprocess.run([sys.executable, "-c", _PROBE.replace("FAMILIES", repr(LAZY))],
                       capture_output=True, text=True, timeout=300, check=True)
  report = json.loads(out.stdout.strip().splitlines()[-1])
  assert report["before"] == {f: [] for f in LAZY}
  assert report["used"] == [0.0, 1.0, 1.0, 1.0, 0.0, 1.0]
  assert report["dir"] == [True, True, True]


def test_an_unknown_attribute_is_still_an_attribute_error():
  import pytest
  import xjax
  import xjax.numpy as jnp
  with pytest.raises(AttributeError, match="has no attribute 'not_a_module'"):
    xjax.not_a_module
  with pytest.raises(AttributeError):
    jnp.not_a_function
