"""Gradients at kinks, ties, zeros and infinities: the cases of tests/core/test_grad_sweep.py,
recorded under real JAX 0.10.2 into tests/golden/grad_sweep.json.

    .venv-jax/bin/python tools/grad_sweep_cases.py

Each case is a scalar function; its gradient is taken at every point of POINTS. A JAX
function defined with a custom JVP (relu, logaddexp, i0, frexp, ...) has its derivative
fixed there by that rule, which a composition of primitives does not reproduce.
"""
import json
import os
import warnings

import numpy as np

POINTS = [0.0, 1.0, -1.0, 6.0, 1e-30, float("inf"), -float("inf")]
GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests",
                      "golden", "grad_sweep.json")


def cases(jax):
  """name -> scalar function, over `jax` (real JAX, or xjax)."""
  import importlib
  sp = importlib.import_module(jax.__name__ + ".scipy.special")
  jnp, nn = jax.numpy, jax.nn
  stack = jnp.stack
  return {
      # jax.nn activations (custom JVPs at relu's and relu6's kinks)
      "relu": nn.relu, "relu6": nn.relu6, "silu": nn.silu, "gelu": nn.gelu,
      "gelu_exact": lambda x: nn.gelu(x, approximate=False), "hard_tanh": nn.hard_tanh,
      "softplus": nn.softplus, "log_sigmoid": nn.log_sigmoid, "sigmoid": nn.sigmoid,
      "elu": nn.elu, "celu": nn.celu, "selu": nn.selu, "leaky_relu": nn.leaky_relu,
      "hard_sigmoid": nn.hard_sigmoid, "hard_silu": nn.hard_silu, "mish": nn.mish,
      "squareplus": nn.squareplus, "sparse_plus": nn.sparse_plus, "soft_sign": nn.soft_sign,
      "glu": lambda x: nn.glu(stack([x, x]))[0],
      "softmax0": lambda x: nn.softmax(stack([x, x]))[0],
      "log_softmax0": lambda x: nn.log_softmax(stack([x, x, 0.0]))[0],
      # jax.numpy elementwise
      "sinc": jnp.sinc, "sinc_tiny": lambda x: jnp.sinc(x * 1e-3), "i0": jnp.i0, "abs": jnp.abs,
      "sqrt": jnp.sqrt, "cbrt": jnp.cbrt, "sign": jnp.sign, "power0": lambda x: x ** 0.5,
      "power_int": lambda x: jnp.power(x, 2), "float_power": lambda x: jnp.float_power(x, 0.5),
      "maximum": lambda x: jnp.maximum(x, 0.0), "minimum": lambda x: jnp.minimum(x, 1.0),
      "clip": lambda x: jnp.clip(x, 0.0, 1.0), "hypot": lambda x: jnp.hypot(x, 0.0),
      "arctan2": lambda x: jnp.arctan2(x, 0.0), "frexp": lambda x: jnp.frexp(x)[0],
      "ldexp": lambda x: jnp.ldexp(x, 2), "logaddexp_inf": lambda x: jnp.logaddexp(x, -jnp.inf),
      "logaddexp2_tie": lambda x: jnp.logaddexp2(x, x),
      # reductions and sorting (ties)
      "max_tie": lambda x: jnp.max(stack([x, x, 0.0])), "min_tie": lambda x: jnp.min(stack([x, x])),
      "median": lambda x: jnp.median(stack([x, x, 0.0])),
      "sort0": lambda x: jnp.sort(stack([x, 0.0]))[0],
      "cumsum": lambda x: jnp.cumsum(stack([x, x]))[1],
      "cummax": lambda x: jax.lax.cummax(stack([x, x]))[1],
      "prod0": lambda x: jnp.prod(stack([x, 0.0, 2.0])), "var": lambda x: jnp.var(stack([x, x])),
      "std": lambda x: jnp.std(stack([x, x])),
      "one_hot_dot": lambda x: jnp.dot(nn.one_hot(1, 3), stack([x, x, x])),
      # linear algebra
      "norm": lambda x: jnp.linalg.norm(stack([x, 0.0])),
      "norm_inf": lambda x: jnp.linalg.norm(stack([x, x]), ord=jnp.inf),
      "det_singular": lambda x: jnp.linalg.det(jnp.array([[x, 1.0], [x, 1.0]])),
      "slogdet": lambda x: jnp.linalg.slogdet(jnp.array([[x + 2.0, 1.0], [1.0, 3.0]]))[1],
      "pinv": lambda x: jnp.linalg.pinv(jnp.array([[x, 0.0], [0.0, 1.0]]))[0, 0],
      # jax.scipy.special
      "entr": sp.entr, "xlogy": lambda x: sp.xlogy(x, x), "xlogy_zero": lambda x: sp.xlogy(0.0, x),
      "xlog1py": lambda x: sp.xlog1py(x, x), "erf": sp.erf, "erfc": sp.erfc,
      "erfinv": lambda x: sp.erfinv(x * 0.5), "ndtri": lambda x: sp.ndtri(x * 0.25 + 0.5),
      "gammaln": sp.gammaln, "digamma": sp.digamma, "log_ndtr": sp.log_ndtr, "ndtr": sp.ndtr,
      "logit": lambda x: sp.logit(x * 0.25 + 0.5), "expit": sp.expit, "i0e": sp.i0e, "i1": sp.i1,
      "i1e": sp.i1e, "polygamma": lambda x: sp.polygamma(1, x + 2.0),
      "rel_entr": lambda x: sp.rel_entr(x, 1.0), "kl_div": lambda x: sp.kl_div(x, 1.0),
      "betaln": lambda x: sp.betaln(x + 1.0, 2.0), "gammainc": lambda x: sp.gammainc(2.0, x + 1.0),
      "zeta": lambda x: sp.zeta(x + 3.0, 1.0), "spence": lambda x: sp.spence(x + 2.0),
      "logsumexp_tie": lambda x: sp.logsumexp(stack([x, x])),
      "logsumexp_b": lambda x: sp.logsumexp(stack([x, 0.0]), b=jnp.array([1.0, 0.0])),
      "logsumexp_neg_inf": lambda x: sp.logsumexp(stack([x, -jnp.inf])),
  }


def gradients(jax, names=None) -> dict:
  """name -> the gradient at each point: a float (NaN, inf included) or "ERR:<class>".
  `names`: only these cases."""
  out = {}
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for name, f in cases(jax).items():
      if names is not None and name not in names:
        continue
      row = []
      for p in POINTS:
        try:
          row.append(float(jax.grad(f)(p)))
        except Exception as e:  # noqa: BLE001 - recorded, and compared, as the error class
          row.append("ERR:" + type(e).__name__)
      out[name] = row
  return out


if __name__ == "__main__":
  import jax
  assert jax.__version__ == "0.10.2", jax.__version__
  with open(GOLDEN, "w") as f:
    json.dump({"jax_version": jax.__version__, "points": POINTS, "gradients": gradients(jax)},
              f, indent=1, sort_keys=True)
    f.write("\n")
  print(f"wrote {GOLDEN}")
