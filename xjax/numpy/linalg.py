"""NumPy's linear algebra over lax (mirrors `jax.numpy.linalg`)."""
from xjax._src.numpy.linalg import (
    cholesky as cholesky, cond as cond, cross as cross, det as det,
    diagonal as diagonal, eig as eig, eigh as eigh, eigvals as eigvals, eigvalsh as eigvalsh,
    inv as inv, lstsq as lstsq, matmul as matmul, matrix_norm as matrix_norm,
    matrix_power as matrix_power, matrix_rank as matrix_rank,
    matrix_transpose as matrix_transpose, multi_dot as multi_dot, norm as norm, outer as outer,
    pinv as pinv, qr as qr, slogdet as slogdet, solve as solve, svd as svd, svdvals as svdvals,
    tensordot as tensordot, tensorinv as tensorinv, tensorsolve as tensorsolve, trace as trace,
    vecdot as vecdot, vector_norm as vector_norm,
)
