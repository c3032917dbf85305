"""numpyro's jaxpr-walking tools: `get_dependencies` / `get_model_relations` (provenance
tracking over `jax.make_jaxpr`, `jax.api_util.flatten_fun`, `jax.extend`), and SVI with
`TraceGraph_ELBO` (which uses them) for 50 steps. Prints one JSON object."""
import json

import numpy as np

import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from numpyro.infer import SVI, TraceGraph_ELBO
from numpyro.infer.autoguide import AutoNormal
from numpyro.infer.inspect import get_dependencies, get_model_relations
from numpyro.ops.provenance import eval_provenance

# JAX 0.10.2's default random-bit layout, made explicit so that both sides draw the same.
jax.config.update("jax_threefry_partitionable", True)


def model(data):
  a = numpyro.sample("a", dist.Normal(0., 1.))
  b = numpyro.sample("b", dist.Normal(a, 1.))
  c = numpyro.sample("c", dist.Normal(a, jnp.exp(b)))
  numpyro.sample("d", dist.Bernoulli(logits=c), obs=data)


def sets(tree):
  """Nested dicts of sets/frozensets as nested dicts of sorted lists (JSON)."""
  if isinstance(tree, dict):
    return {k: sets(v) for k, v in tree.items()}
  return sorted(tree) if isinstance(tree, (set, frozenset)) else tree


def nested(x, y, z):
  inner = jax.jit(lambda u: jax.lax.cond(u.sum() > 0, lambda v: v * z, lambda v: v, u))
  return {"sum": x + y, "jit_cond": inner(x), "const": jnp.ones(2)}


svi = SVI(model, AutoNormal(model), numpyro.optim.Adam(0.01), TraceGraph_ELBO())
result = svi.run(jax.random.PRNGKey(0), 50, jnp.ones(()), progress_bar=False)
out = {
    "dependencies": sets(get_dependencies(model, model_args=(jnp.ones(()),))),
    "relations": sets(get_model_relations(model, model_args=(jnp.ones(()),))),
    "provenance": sets(eval_provenance(nested, x=jnp.ones(2), y=jnp.ones(2), z=3.)),
    "tracegraph_losses": np.asarray(result.losses[::5]).tolist(),
}
print(json.dumps(out))
