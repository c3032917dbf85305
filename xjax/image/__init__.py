"""Image resampling: resize, scale_and_translate (mirrors `jax.image`)."""
from xjax._src.image.scale import (
    ResizeMethod as ResizeMethod,
    resize as resize,
    scale_and_translate as scale_and_translate,
)
