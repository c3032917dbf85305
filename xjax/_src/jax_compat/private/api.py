"""`jax._src.api` under `xjax.install_as_jax()`: JAX's module of the public transformations
(JAX's tests call ``api.jit``, ``api.vmap``, ``api.grad``...), here xjax's, plus the private
`_std_basis`. Other names fall back to `xjax._src.api`."""
from xjax._src import jacobian as _jacobian
from xjax._src import tree_util as _tree_util
from xjax._src.api import *  # noqa: F401,F403
from xjax._src.api import (  # noqa: F401
    eval_shape, grad, jvp, linearize, make_jaxpr, named_call, value_and_grad, vjp)
from xjax import (  # noqa: F401
    block_until_ready, checkpoint, custom_jvp, custom_vjp, device_get, device_put,
    disable_jit, fwd_and_bwd, hessian, jacfwd,
    jacrev, jit, linear_transpose, pmap, pure_callback, remat, vmap)


def _std_basis(pytree):
  """The standard basis of the flattened `pytree`, as a pytree of its structure whose leaves
  have a leading axis of the total size (JAX's private `api._std_basis`)."""
  leaves, treedef = _tree_util.tree_flatten(pytree)
  return _tree_util.tree_unflatten(treedef, _jacobian._std_basis(leaves))
