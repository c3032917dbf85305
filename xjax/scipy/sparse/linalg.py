"""SciPy's sparse iterative solvers on xjax arrays (mirrors `jax.scipy.sparse.linalg`)."""
from xjax._src.scipy.sparse_linalg import bicgstab as bicgstab, cg as cg, gmres as gmres
