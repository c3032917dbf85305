"""`jax._src.cudnn.scaled_matmul_stablehlo` under `xjax.install_as_jax()`: `quantize` (block
quantization for `jax.nn.scaled_matmul`) and the `BlockScaleConfig` it takes."""
from xjax._src.nn.functions import BlockScaleConfig as BlockScaleConfig  # noqa: F401
from xjax._src.nn.functions import quantize as quantize  # noqa: F401
