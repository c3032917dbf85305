"""`jax._src.mesh` under `xjax.install_as_jax()`: meshes, axis types and the mesh contexts
(xjax keeps them in `xjax._src.sharding.mesh` and `.axis_types`)."""
from xjax._src.sharding.axis_types import use_abstract_mesh as use_abstract_mesh
from xjax._src.sharding.mesh import (  # noqa: F401
    AbstractMesh, AxisType, Mesh, get_abstract_mesh, get_concrete_mesh, make_mesh, set_mesh,
    use_mesh)


def empty_concrete_mesh():
  """A mesh of no devices and no axes (what no `set_mesh` context gives)."""
  import numpy as np
  return Mesh(np.empty((), dtype=object), ())
