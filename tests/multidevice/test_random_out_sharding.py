"""`out_sharding=` of the random samplers lays their results out (eagerly and under jit, with
the key, an extended-dtype argument, placed over the mesh), with the values they have
unsharded."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import random
from xjax.sharding import AxisType, NamedSharding, PartitionSpec as P

SAMPLERS = {
    "uniform": lambda k, n, s: random.uniform(k, (n,), out_sharding=s),
    "normal": lambda k, n, s: random.normal(k, (n,), out_sharding=s),
    "bits": lambda k, n, s: random.bits(k, (n,), out_sharding=s),
    "exponential": lambda k, n, s: random.exponential(k, (n,), out_sharding=s),
    "gumbel": lambda k, n, s: random.gumbel(k, (n,), out_sharding=s),
    "gamma": lambda k, n, s: random.gamma(k, 2.0, (n,), out_sharding=s),
    "ball": lambda k, n, s: random.ball(k, 3, shape=(n,), out_sharding=s),
    "categorical": lambda k, n, s: random.categorical(k, jnp.zeros(3), shape=(n,),
                                                      out_sharding=s),
    "permutation": lambda k, n, s: random.permutation(k, n, out_sharding=s),
    "multivariate_normal": lambda k, n, s: random.multivariate_normal(
        k, jnp.zeros(n), jnp.eye(n), (n,), out_sharding=s),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_out_sharding_places_the_samples(name):
  fn = SAMPLERS[name]
  mesh = xjax.make_mesh((4,), ("x",), axis_types=(AxisType.Explicit,))
  sharding = NamedSharding(mesh, P("x"))
  key = random.key(0)
  with xjax.sharding.use_mesh(mesh):
    eager = fn(key, 4, sharding)
    jitted = xjax.jit(fn, static_argnums=(1, 2))(key, 4, sharding)
  assert eager.sharding.is_equivalent_to(sharding, eager.ndim)
  assert jitted.sharding.is_equivalent_to(sharding, jitted.ndim)
  np.testing.assert_array_equal(np.asarray(eager), np.asarray(fn(key, 4, None)))
  # The same draws; a sharded program may round a transcendental step differently (1 ulp).
  np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager), rtol=1e-6)
