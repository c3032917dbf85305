"""`jax._src.checkify` under `xjax.install_as_jax()`: xjax's checkify (flax's
`nnx.checkify` calls `checkify` and names `Error`, `JaxException` and `user_checks`)."""
from xjax._src.checkify import (  # noqa: F401
    Error as Error,
    JaxException as JaxException,
    all_checks as all_checks,
    checkify as checkify,
    user_checks as user_checks,
)
