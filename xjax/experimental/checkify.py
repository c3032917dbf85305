"""Functional run-time error checks (mirrors `jax.experimental.checkify`)."""
from xjax._src.checkify import (
    Error as Error,
    ErrorCategory as ErrorCategory,
    JaxRuntimeError as JaxRuntimeError,
    all_checks as all_checks,
    automatic_checks as automatic_checks,
    check as check,
    check_error as check_error,
    checkify as checkify,
    debug_check as debug_check,
    div_checks as div_checks,
    float_checks as float_checks,
    index_checks as index_checks,
    init_error as init_error,
    nan_checks as nan_checks,
    user_checks as user_checks,
)
