"""The persistent compilation cache (mirrors `jax.experimental.compilation_cache`).

Use ``from xjax.experimental.compilation_cache import compilation_cache as cc``
and ``cc.set_cache_dir(path)``, or set the ``jax_compilation_cache_dir`` flag.
"""
