"""`jax._src.random.rbg` under `xjax.install_as_jax()`. xjax implements only the Threefry-2x32
PRNG: the RBG implementations (`rbg_prng_impl`, `unsafe_rbg_prng_impl`) do not exist, and
reading them raises AttributeError."""
