"""`jax._src.cudnn` under `xjax.install_as_jax()`: of JAX's cuDNN kernels' Python side, the
block quantization of `scaled_matmul_stablehlo` (xjax has no cuDNN kernels; its
`jax.nn.scaled_matmul` is computed with `lax.scaled_dot`)."""
