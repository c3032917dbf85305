"""chex's basics: assertions (shapes, ranks, types, trees close/equal/finite, traces), a
chex.dataclass used as a pytree under jit and vmap, chex.Dimensions, and chex.variants
(with_jit, without_jit, with_device, without_device, with_pmap) running one test body each.
Prints what passed, the assertion messages and the computed values as JSON (last line)."""
import json
import unittest

import chex
import jax
import jax.numpy as jnp
import numpy as np

results = {}


def outcome(fn):
  """'ok', or the exception's class and the first line of its message."""
  try:
    fn()
    return "ok"
  except (AssertionError, AttributeError, ValueError, TypeError) as e:
    return f"{type(e).__name__}: {str(e).strip().splitlines()[0]}"


x = jnp.ones((2, 3))
ints = jnp.arange(4)
tree = {"a": jnp.arange(3.0), "b": (jnp.ones((2, 2)), jnp.float32(2.0))}
checks = {
    "shape_ok": lambda: chex.assert_shape(x, (2, 3)),
    "shape_bad": lambda: chex.assert_shape(x, (3, 2)),
    "shape_wildcard": lambda: chex.assert_shape([x, x], (None, 3)),
    "shape_ellipsis": lambda: chex.assert_shape(x, (..., 3)),
    "rank_ok": lambda: chex.assert_rank(x, 2),
    "rank_bad": lambda: chex.assert_rank([x, ints], {1, 3}),
    "type_ok": lambda: chex.assert_type(x, float),
    "type_bad": lambda: chex.assert_type(ints, float),
    "type_dtype": lambda: chex.assert_type(ints, jnp.int32),
    "equal_shape_bad": lambda: chex.assert_equal_shape([x, ints]),
    "axis_dimension": lambda: chex.assert_axis_dimension(x, 1, 3),
    "axis_dimension_bad": lambda: chex.assert_axis_dimension(x, 0, 3),
    "scalar_positive": lambda: chex.assert_scalar_positive(3),
    "scalar_positive_bad": lambda: chex.assert_scalar_positive(-1.0),
    "trees_close_ok": lambda: chex.assert_trees_all_close(
        tree, jax.tree.map(lambda t: t + 1e-7, tree), atol=1e-6),
    "trees_close_bad": lambda: chex.assert_trees_all_close(
        tree, jax.tree.map(lambda t: t + 1e-2, tree)),
    "trees_equal_bad": lambda: chex.assert_trees_all_equal(tree, jax.tree.map(jnp.zeros_like, tree)),
    "trees_equal_shapes": lambda: chex.assert_trees_all_equal_shapes(tree, tree),
    "trees_equal_dtypes_bad": lambda: chex.assert_trees_all_equal_dtypes(
        tree, jax.tree.map(lambda t: t.astype(jnp.int32), tree)),
    "tree_finite_ok": lambda: chex.assert_tree_all_finite(tree),
    "tree_finite_bad": lambda: chex.assert_tree_all_finite({"a": jnp.array([1.0, jnp.nan])}),
    "tree_shape_prefix": lambda: chex.assert_tree_shape_prefix(tree["b"], (2,)),
    "tree_no_nones_bad": lambda: chex.assert_tree_no_nones({"a": None, "b": x}),
    "is_broadcastable": lambda: chex.assert_is_broadcastable((3,), (2, 3)),
    "numerical_grads": lambda: chex.assert_numerical_grads(
        lambda a, b: jnp.sum(jnp.sin(a) * b ** 2), (jnp.arange(3.0), jnp.ones(3)), order=1),
}
results["asserts"] = {name: outcome(fn) for name, fn in checks.items()}


@chex.assert_max_traces(n=1)
def traced_once(a):
  return a * 2


jitted = jax.jit(traced_once)
jitted(jnp.ones(2))
jitted(jnp.zeros(2))  # same signature: no retrace
results["max_traces_ok"] = outcome(lambda: jitted(jnp.ones(2)))
results["max_traces_bad"] = outcome(lambda: jitted(jnp.ones(5)))


def in_jit_shape(a):
  chex.assert_shape(a, (4,))
  chex.assert_rank(a, 1)
  return a + 1


results["assert_in_jit"] = np.asarray(jax.jit(in_jit_shape)(jnp.ones(4))).tolist()
results["assert_in_jit_bad"] = outcome(lambda: jax.jit(in_jit_shape)(jnp.ones(3)))


@chex.dataclass
class Params:
  w: chex.Array
  b: chex.Array


@chex.dataclass(frozen=True)
class Frozen:
  scale: float
  shift: chex.Array


p = Params(w=jnp.arange(6.0).reshape(2, 3), b=jnp.ones(3))
doubled = jax.jit(lambda q: q.replace(w=q.w * 2))(p)
results["dataclass_jit_w"] = np.asarray(doubled.w).tolist()
results["dataclass_type_kept"] = type(doubled).__name__
results["dataclass_leaves"] = {str(i): np.asarray(v).tolist()
                              for i, v in enumerate(jax.tree.leaves(p))}
results["dataclass_keys"] = ",".join(sorted(p.keys()))
results["dataclass_mapping"] = np.asarray(p["b"]).tolist()
batched = Params(w=jnp.arange(12.0).reshape(4, 3), b=jnp.arange(4.0))
results["dataclass_vmap"] = np.asarray(jax.vmap(lambda q: q.w.sum() * q.b)(batched)).tolist()
grads = jax.grad(lambda q: jnp.sum(q.w ** 2) + jnp.sum(q.b))(p)
results["dataclass_grad"] = {"w": np.asarray(grads.w).tolist(), "b": np.asarray(grads.b).tolist()}
f = Frozen(scale=2.0, shift=jnp.ones(2))
results["frozen_call"] = np.asarray(jax.jit(lambda fr: fr.shift * fr.scale)(f)).tolist()
results["frozen_set"] = outcome(lambda: setattr(f, "scale", 3.0)) != "ok"
results["dataclass_tree_map"] = np.asarray(jax.tree.map(lambda t: t + 1, p).b).tolist()

dims = chex.Dimensions(B=2, T=5)
dims["C"] = (3,)
results["dimensions"] = list(dims["BTC"]) + list(dims["B*T"])


class VariantsTest(chex.TestCase):

  @chex.variants(with_jit=True, without_jit=True, with_device=True, without_device=True,
                 with_pmap=True)
  def test_affine(self):
    @self.variant
    def affine(a, b):
      return 2.0 * a + b

    a, b = jnp.arange(3.0), jnp.ones(3)
    if self.variant.type == chex.ChexVariantType.WITH_PMAP:
      a, b = a[None], b[None]
    out = np.asarray(affine(a, b)).reshape(-1)
    VariantsTest.seen[self._testMethodName] = out.tolist()

  @chex.all_variants(with_pmap=False)
  def test_static_argnums(self):
    def power(a, n):
      return a ** n

    fn = self.variant(power, static_argnums=1)
    VariantsTest.seen[self._testMethodName] = np.asarray(fn(jnp.arange(3.0), 3)).tolist()


VariantsTest.seen = {}
suite = unittest.defaultTestLoader.loadTestsFromTestCase(VariantsTest)
run = unittest.TextTestRunner(verbosity=0, stream=open("/dev/null", "w")).run(suite)
results["variants_run"] = run.testsRun
results["variants_failures"] = "; ".join(str(t) for t, _ in run.failures + run.errors)
results["variants_seen"] = VariantsTest.seen

print(json.dumps(results))
