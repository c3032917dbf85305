"""Rotations in 3 dimensions on xjax arrays (mirrors `jax.scipy.spatial.transform`)."""
from xjax._src.scipy.spatial_transform import Rotation as Rotation, Slerp as Slerp
