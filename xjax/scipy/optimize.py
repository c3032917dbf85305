"""SciPy's unconstrained minimization on xjax arrays (mirrors `jax.scipy.optimize`)."""
from xjax._src.scipy.optimize import (
    OptimizeResults as OptimizeResults, minimize as minimize,
)
