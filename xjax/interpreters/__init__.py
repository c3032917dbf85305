"""JAX's interpreter modules for libraries that define primitives (mirrors `jax.interpreters`).

`ad`, `batching`, `partial_eval` and `mlir` give JAX's registration API
(``ad.primitive_jvps[p] = rule``, ``batching.primitive_batchers[p] = rule``,
``mlir.register_lowering(p, mlir.lower_fun(f))``) over xjax's rules, which live on the
primitives themselves (see `xjax._src.interpreters.registries`).
"""

# As in JAX, `import jax` makes jax.interpreters.ad (and the others) usable.
from xjax.interpreters import (  # noqa: E402
    ad as ad,
    batching as batching,
    mlir as mlir,
    partial_eval as partial_eval,
    xla as xla,
)
