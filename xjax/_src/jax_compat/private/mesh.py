"""`jax._src.mesh` under `xjax.install_as_jax()`: meshes, axis types and the mesh contexts
(xjax keeps them in `xjax._src.sharding.mesh` and `.axis_types`)."""
from xjax._src.sharding.axis_types import use_abstract_mesh as use_abstract_mesh
from xjax._src.sharding.mesh import (  # noqa: F401
    AbstractMesh, AxisType, Mesh, get_abstract_mesh, get_concrete_mesh, make_mesh, set_mesh,
    use_mesh)


import numpy as _np  # noqa: E402

# A mesh of no devices and no axes (JAX's module-level constant; what no `set_mesh` gives).
empty_concrete_mesh = Mesh(_np.empty((), dtype=object), ())
