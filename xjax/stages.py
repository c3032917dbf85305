"""The stages of ahead-of-time compilation (mirrors `jax.stages`).

``jax.jit(f)`` is a `Wrapped`; ``jax.jit(f).trace(*args)`` a `Traced` (the jaxpr); its
``.lower()`` (or ``jax.jit(f).lower(*args)``) a `Lowered` (the StableHLO module); whose
``.compile()`` gives a `Compiled`, callable on arguments of the lowered signature. Each
stage describes its arguments by `ArgInfo`s (``.args_info``); `CompilerOptions` is the
type of ``Lowered.compile``'s and ``jit``'s ``compiler_options``.
"""
from xjax._src.jit_stages import (
    Compiled as Compiled,
    Lowered as Lowered,
    Traced as Traced,
)
from xjax._src.stages import (
    ArgInfo as ArgInfo,
    CompilerOptions as CompilerOptions,
    Wrapped as Wrapped,
)
