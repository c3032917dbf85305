"""The extension API as libraries use it (issue 22): primitives and rules registered through
jax.extend / jax.interpreters by equinox.internal (noinline, nondifferentiable_backward,
unvmap_*, checkpointed while_loop/scan with select_if_vmap, finalise_jaxpr), numpyro's
provenance tracing (lu.wrap_init + flatten_fun + jaxpr walk) and flax's partial
evaluation by shape (pe.trace_to_jaxpr_nounits), plus a primitive defined here with a
JVP, a transpose, a batching rule and a lower_fun lowering. Prints one JSON object."""
import json

import numpy as np

import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

out = {}


def tolist(x):
  return np.asarray(x).tolist()


# A library-style primitive: y = sin(x) * c, with every rule kind.
sinc_p = Primitive("sinc_script")
sinc_p.def_impl(lambda x, *, c: jnp.sin(x) * c)
sinc_p.def_abstract_eval(lambda x, *, c: jax.core.ShapedArray(x.shape, x.dtype))
mlir.register_lowering(sinc_p, mlir.lower_fun(lambda x, *, c: jnp.sin(x) * c,
                                              multiple_results=False))


def _sinc_jvp(primals, tangents, *, c):
  (x,), (t,) = primals, tangents
  y = sinc_p.bind(x, c=c)
  if type(t) is ad.Zero:
    return y, ad.Zero.from_primal_value(y)
  return y, jnp.cos(x) * c * t


ad.primitive_jvps[sinc_p] = _sinc_jvp
batching.primitive_batchers[sinc_p] = lambda args, dims, *, c: (sinc_p.bind(args[0], c=c), dims[0])

rev_p = Primitive("rev_script")  # linear: its transpose is itself
rev_p.def_impl(lambda x: x[::-1])
rev_p.def_abstract_eval(lambda x: jax.core.ShapedArray(x.shape, x.dtype))
mlir.register_lowering(rev_p, mlir.lower_fun(lambda x: x[::-1], multiple_results=False))
ad.deflinear2(rev_p, lambda ct, x: [rev_p.bind(ct)])
batching.primitive_batchers[rev_p] = lambda args, dims: (
    jax.vmap(lambda r: r[::-1])(batching.bdim_at_front(args[0], dims[0], args[0].shape[dims[0]])), 0)

x = jnp.array([0.3, -1.2, 2.0])
xs = jnp.array([[0.3, -1.2, 2.0], [1.0, 0.5, -0.7]])
f = lambda x: jnp.sum(sinc_p.bind(rev_p.bind(x), c=3.0) ** 2)
out["prim_eager"] = tolist(sinc_p.bind(x, c=3.0))
out["prim_jit"] = tolist(jax.jit(lambda x: sinc_p.bind(x, c=3.0))(x))
out["prim_grad"] = tolist(jax.grad(f)(x))
out["prim_jit_grad"] = tolist(jax.jit(jax.grad(f))(x))
out["prim_vmap_grad"] = tolist(jax.vmap(jax.grad(f))(xs))
out["prim_linearize"] = tolist(jax.linearize(lambda x: sinc_p.bind(rev_p.bind(x), c=2.0), x)[1](
    jnp.array([1.0, 2.0, 3.0])))
out["prim_vmap_axis1"] = tolist(jax.vmap(rev_p.bind, in_axes=1, out_axes=1)(xs.T))
out["prim_jaxpr_has_prims"] = all(n in str(jax.make_jaxpr(f)(x)) for n in ("sinc_script", "rev_script"))

# equinox.internal: primitives defined with jax.extend + jax.interpreters.
import equinox as eqx
import equinox.internal as eqxi

nf = eqxi.noinline(lambda a, b: jnp.sin(a) * b)
out["eqx_noinline"] = tolist(nf(x, 2.0))
out["eqx_noinline_grad"] = tolist(jax.grad(lambda a: nf(a, 2.0).sum())(x))
out["eqx_noinline_vmap"] = tolist(jax.vmap(nf, in_axes=(0, None))(xs, 2.0))
out["eqx_noinline_jit_grad"] = tolist(eqx.filter_jit(jax.grad(lambda a: nf(a, 3.0).sum()))(x))
flags = jnp.array([True, False])
out["eqx_unvmap_any"] = bool(eqxi.unvmap_any(flags))
out["eqx_unvmap_any_vmap"] = tolist(jax.vmap(eqxi.unvmap_any)(flags))
out["eqx_unvmap_all_jit_vmap"] = tolist(jax.jit(jax.vmap(eqxi.unvmap_all))(flags))
out["eqx_unvmap_max_vmap"] = tolist(jax.vmap(eqxi.unvmap_max)(jnp.arange(4)))
out["eqx_nondiff_backward"] = tolist(jax.jit(lambda a: eqxi.nondifferentiable_backward(a) * 2)(x))
try:
  jax.grad(lambda a: eqxi.nondifferentiable_backward(a).sum())(x)
  out["eqx_nondiff_backward_grad"] = "no error"
except RuntimeError:
  out["eqx_nondiff_backward_grad"] = "RuntimeError"


def loop(a):
  return eqxi.while_loop(lambda c: c[1] < 4, lambda c: (jnp.sin(c[0]) * a, c[1] + 1), (a, 0),
                         kind="checkpointed", max_steps=8, checkpoints=2)[0]


out["eqx_checkpointed_vmap_grad"] = tolist(jax.jit(jax.vmap(jax.grad(loop)))(jnp.array([0.5, 1.0])))
out["eqx_scan_grad"] = float(jax.grad(lambda a: eqxi.scan(
    lambda c, v: (c * a + v, c), 1.0, jnp.arange(4.0), kind="checkpointed", checkpoints=2)[0])(1.5))
g = lambda a: nf(a, 2.0) + jax.jit(lambda y: y * 3)(a)
out["eqx_finalise_fn"] = tolist(eqxi.finalise_fn(g)(x))

# numpyro: provenance tracing through jax.extend.linear_util and jaxpr walking.
from numpyro.ops.provenance import eval_provenance

out["numpyro_provenance_add"] = ",".join(sorted(
    eval_provenance(lambda x, y, z: x + y, x=1.0, y=2.0, z=3.0)))
out["numpyro_provenance_jit"] = ",".join(sorted(
    eval_provenance(lambda x, y, z: jax.jit(lambda a, b: a * b)(x, z) + 0 * y,
                    x=jnp.ones(2), y=2.0, z=3.0)))

# flax: partial evaluation by shape (pe.trace_to_jaxpr_nounits over lu.wrap_init), lazy
# init, and nn.scan's broadcast variables.
import flax.core
import flax.linen as nn
from flax.jax_utils import partial_eval_by_shape

y, variables = partial_eval_by_shape(
    lambda v: nn.Dense(3).init_with_output(jax.random.key(0), v), [(2, 4)])
out["flax_partial_eval_by_shape"] = {"shape": list(y.shape), "dtype": str(y.dtype),
                                     "kernel": list(variables["params"]["kernel"].shape)}
lazy = flax.core.lazy_init(lambda scope, v: scope.param("w", lambda k, s: jnp.ones(s),
                                                        (v.shape[-1], 2)))
lazy_vars = lazy(jax.random.key(0), jax.ShapeDtypeStruct((3, 4), jnp.float32))
out["flax_lazy_init"] = tolist(lazy_vars["params"]["w"])



class Cell(nn.Module):
  @nn.compact
  def __call__(self, c, v):
    h = jnp.tanh(nn.Dense(2)(c) + v)
    return h, h


# nn.scan with broadcast params traces its body with pe.trace_to_jaxpr_nounits.
Scan = nn.scan(Cell, variable_broadcast="params", split_rngs={"params": False})
scan_vars = Scan().init(jax.random.key(0), jnp.zeros(2), jnp.ones((5, 2)))
out["flax_scan_kernel_shape"] = list(scan_vars["params"]["Dense_0"]["kernel"].shape)
scan_vars = jax.tree.map(lambda a: jnp.full_like(a, 0.1), scan_vars)
out["flax_scan_apply"] = tolist(Scan().apply(scan_vars, jnp.zeros(2), jnp.ones((5, 2)))[1])

print(json.dumps(out))
