"""Custom derivative rules: the public names of `jax.custom_derivatives`."""
from xjax._src.custom_derivatives import (CustomVJPPrimal as CustomVJPPrimal,
                                          SymbolicZero as SymbolicZero,
                                          custom_jvp as custom_jvp,
                                          custom_jvp_call_p as custom_jvp_call_p,
                                          custom_vjp as custom_vjp,
                                          custom_vjp_call_p as custom_vjp_call_p,
                                          custom_vjp_primal_tree_values as custom_vjp_primal_tree_values,
                                          zero_from_primal as zero_from_primal)
from xjax._src.custom_gradient import (closure_convert as closure_convert,
                                       custom_gradient as custom_gradient)
from xjax._src.custom_remat_opt import remat_opt_p as remat_opt_p
from xjax._src.linear_call import linear_call as linear_call, linear_call_p as linear_call_p
