"""numpyro NUTS on a Bayesian linear regression (synthetic data, fixed PRNGKey).

Prints posterior means and standard deviations from a 200 + 200 step run, and every
sample of a short 10 + 10 step run (whose trajectory agrees to float rounding across
implementations with the same random bits), as one JSON object.
"""
import json

import numpy as np

import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS

# JAX 0.10.2's default random-bit layout, made explicit so that both sides draw the same.
jax.config.update("jax_threefry_partitionable", True)


def model(x, y=None):
  w = numpyro.sample("w", dist.Normal(0., 1.).expand([x.shape[1]]).to_event(1))
  b = numpyro.sample("b", dist.Normal(0., 1.))
  sigma = numpyro.sample("sigma", dist.HalfNormal(1.))
  numpyro.sample("obs", dist.Normal(jnp.dot(x, w) + b, sigma), obs=y)


rng = np.random.default_rng(0)
x = rng.standard_normal((50, 3)).astype(np.float32)
y = (x @ np.array([1., -2., 0.5]) + 0.3 + 0.5 * rng.standard_normal(50)).astype(np.float32)


def run(num_warmup, num_samples):
  mcmc = MCMC(NUTS(model), num_warmup=num_warmup, num_samples=num_samples, progress_bar=False)
  mcmc.run(jax.random.PRNGKey(0), x, y, extra_fields=("num_steps", "diverging"))
  return mcmc.get_samples(), mcmc.get_extra_fields()


samples, extra = run(200, 200)
short, short_extra = run(10, 10)
out = {
    "mean": {k: np.asarray(jnp.mean(v, 0)).tolist() for k, v in samples.items()},
    "std": {k: np.asarray(jnp.std(v, 0)).tolist() for k, v in samples.items()},
    "num_samples": int(samples["b"].shape[0]),
    "divergences": int(jnp.sum(extra["diverging"])),
    "short_samples": {k: np.asarray(v).tolist() for k, v in short.items()},
    "short_num_steps": np.asarray(short_extra["num_steps"]).tolist(),
}
print(json.dumps(out))
