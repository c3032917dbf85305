"""SciPy's linear algebra on xjax arrays (mirrors `jax.scipy.linalg`)."""
from xjax._src.scipy.linalg import (
    block_diag as block_diag, cho_factor as cho_factor, cho_solve as cho_solve,
    cholesky as cholesky, det as det, eigh as eigh, eigh_tridiagonal as eigh_tridiagonal,
    hessenberg as hessenberg, inv as inv, lu as lu, lu_factor as lu_factor, lu_solve as lu_solve,
    polar as polar, qr as qr, qr_multiply as qr_multiply, schur as schur, solve as solve,
    solve_sylvester as solve_sylvester, solve_triangular as solve_triangular, svd as svd,
)
from xjax._src.scipy.linalg_matfuncs import (
    expm as expm, expm_frechet as expm_frechet, funm as funm, rsf2csf as rsf2csf, sqrtm as sqrtm,
)
from xjax._src.scipy.special_matrices import (
    circulant as circulant, companion as companion, convolution_matrix as convolution_matrix,
    dft as dft, fiedler as fiedler, fiedler_companion as fiedler_companion, hadamard as hadamard,
    hankel as hankel, helmert as helmert, hilbert as hilbert, invhilbert as invhilbert,
    invpascal as invpascal, leslie as leslie, pascal as pascal, toeplitz as toeplitz,
)
