"""`jax._src.custom_derivatives` under `xjax.install_as_jax()`: xjax's module, plus JAX's
private `optimize_remat_of_custom_vjp_fwd` and `remat_opt_p`, which xjax keeps in
`xjax._src.custom_remat_opt`."""
from xjax._src.custom_derivatives import *  # noqa: F401,F403
# custom_gradient.py holds these (and closure_convert's private perturbation heuristic).
from xjax._src.custom_gradient import (  # noqa: F401
    _maybe_perturbed, closure_convert, custom_gradient)
from xjax._src.custom_remat_opt import (  # noqa: F401
    optimize_remat_of_custom_vjp_fwd, remat_opt_p)
