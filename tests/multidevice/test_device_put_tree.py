"""device_put of pytrees over shardings keeps each sharding as given (JAX 0.10.2)."""
import numpy as np

import xjax as jax
import xjax.numpy as jnp
from xjax.sharding import PartitionSpec as P


def test_shardings_are_kept_as_given_through_a_reshard():
  mesh = jax.sharding.Mesh(np.array(jax.devices()[:2]).reshape((2, 1)), ("x", "y"))
  s1, s2 = jax.NamedSharding(mesh, P("x")), jax.NamedSharding(mesh, P("y"))
  s3 = jax.NamedSharding(mesh, P("x", "y"))
  x, y, z = jnp.arange(2), jnp.arange(2) + 10, (jnp.arange(2) + 100).reshape((2, 1))
  out = jax.device_put((x, (y, z)), device=(s1, (s2, s3)))
  # P('x') stays P('x') (not P(('x', 'y')), the same layout where 'y' has size 1).
  assert out[0].sharding == s1 and out[1][0].sharding == s2 and out[1][1].sharding == s3
  np.testing.assert_array_equal(out[1][1], z)
  prefix = jax.device_put((x, (y, z[:, 0])), device=(s1, s2))
  assert prefix[1][1].sharding == s2


def test_an_array_already_so_sharded_is_returned_itself():
  mesh = jax.sharding.Mesh(jax.devices(), ("x",))
  s = jax.NamedSharding(mesh, P("x"))
  y = jax.device_put(jnp.arange(len(jax.devices())), s)
  assert jax.device_put(y, s) is y and jax.device_put(y) is y
  u = jax.device_put(y, jax.devices()[0])
  assert u.devices() == {jax.devices()[0]}
