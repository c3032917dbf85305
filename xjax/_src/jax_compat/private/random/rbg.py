"""`jax._src.random.rbg` under `xjax.install_as_jax()`: the RngBitGenerator PRNGs
(`rbg_prng_impl`, `unsafe_rbg_prng_impl`), xjax's `xjax._src.random.rbg`, read through the
alias fallback."""
