"""Vector quantization on xjax arrays (mirrors `jax.scipy.cluster.vq`)."""
from xjax._src.scipy.cluster import vq as vq
