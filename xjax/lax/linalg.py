"""Linear-algebra primitives and their wrappers (mirrors `jax.lax.linalg`)."""
from xjax._src.lax.linalg.cholesky import cholesky as cholesky, cholesky_p as cholesky_p
from xjax._src.lax.linalg.triangular_solve import (
    triangular_solve as triangular_solve, triangular_solve_p as triangular_solve_p,
)
from xjax._src.lax.linalg.eigh import (
    EighImplementation as EighImplementation, eigh as eigh, eigh_p as eigh_p,
)
from xjax._src.lax.linalg.svd import SvdAlgorithm as SvdAlgorithm, svd as svd, svd_p as svd_p
from xjax._src.lax.linalg.schur import schur as schur, schur_p as schur_p
from xjax._src.lax.linalg.hessenberg import (
    hessenberg as hessenberg, hessenberg_p as hessenberg_p,
)
from xjax._src.lax.linalg.tridiagonal import (
    tridiagonal as tridiagonal, tridiagonal_p as tridiagonal_p,
    tridiagonal_solve as tridiagonal_solve, tridiagonal_solve_p as tridiagonal_solve_p,
)
from xjax._src.lax.linalg.symmetric_product import (
    symmetric_product as symmetric_product, symmetric_product_p as symmetric_product_p,
)
from xjax._src.lax.linalg.cholesky_update import (
    cholesky_update as cholesky_update, cholesky_update_p as cholesky_update_p,
)
from xjax._src.lax.linalg.eig import (
    EigImplementation as EigImplementation, eig as eig, eig_p as eig_p,
)
from xjax._src.lax.linalg.lu import (
    lu as lu, lu_p as lu_p, lu_pivots_to_permutation as lu_pivots_to_permutation,
    lu_pivots_to_permutation_p as lu_pivots_to_permutation_p,
)
from xjax._src.lax.linalg.qr import (
    householder_product as householder_product, householder_product_p as householder_product_p,
    ormqr as ormqr, ormqr_p as ormqr_p, qr as qr, qr_p as qr_p,
)
from xjax._src.lax.linalg.qdwh import qdwh as qdwh
