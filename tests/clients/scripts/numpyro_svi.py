"""numpyro SVI with an AutoNormal guide on a Bayesian linear regression (synthetic data,
fixed PRNGKey, Adam, 300 steps). Prints the loss curve (every 25th step), the guide's
final parameters and posterior-predictive means from the fitted guide, as one JSON
object."""
import json

import numpy as np

import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from numpyro.infer import SVI, Predictive, Trace_ELBO
from numpyro.infer.autoguide import AutoNormal

# JAX 0.10.2's default random-bit layout, made explicit so that both sides draw the same.
jax.config.update("jax_threefry_partitionable", True)


def model(x, y=None):
  w = numpyro.sample("w", dist.Normal(0., 1.).expand([x.shape[1]]).to_event(1))
  b = numpyro.sample("b", dist.Normal(0., 1.))
  sigma = numpyro.sample("sigma", dist.HalfNormal(1.))
  with numpyro.plate("data", x.shape[0]):
    numpyro.sample("obs", dist.Normal(jnp.dot(x, w) + b, sigma), obs=y)


rng = np.random.default_rng(1)
x = rng.standard_normal((60, 3)).astype(np.float32)
y = (x @ np.array([0.7, -1.5, 2.0]) - 0.4 + 0.3 * rng.standard_normal(60)).astype(np.float32)

guide = AutoNormal(model)
svi = SVI(model, guide, numpyro.optim.Adam(0.05), Trace_ELBO())
result = svi.run(jax.random.PRNGKey(0), 300, x, y, progress_bar=False)
median = guide.median(result.params)
pred = Predictive(model, guide=guide, params=result.params, num_samples=100)(
    jax.random.PRNGKey(1), x)
out = {
    "losses": np.asarray(result.losses[::25]).tolist(),
    "final_loss": float(result.losses[-1]),
    "params": {k: np.asarray(v).tolist() for k, v in sorted(result.params.items())},
    "median": {k: np.asarray(v).tolist() for k, v in sorted(median.items())},
    "pred_mean": np.asarray(jnp.mean(pred["obs"], 0)[:10]).tolist(),
}
print(json.dumps(out))
