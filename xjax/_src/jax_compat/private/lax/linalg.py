"""`jax._src.lax.linalg` under `xjax.install_as_jax()`: JAX's one module of linear-algebra
primitives, which xjax splits into `xjax._src.lax.linalg.<name>` (loaded on first use): the
public `jax.lax.linalg` names, and the private ones JAX's tests call (`geqrf`, `geqp3`,
`_lu_python`, `_lu_solve`)."""
from xjax.lax.linalg import *  # noqa: F401,F403
from xjax._src.lax.linalg.lu import (  # noqa: F401
    _lu_python as _lu_python,
    lu_solve as _lu_solve,
)
from xjax._src.lax.linalg.qr import (  # noqa: F401
    geqp3 as geqp3,
    geqp3_p as geqp3_p,
    geqrf as geqrf,
    geqrf_p as geqrf_p,
)
