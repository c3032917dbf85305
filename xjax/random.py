"""Pseudo-random numbers from explicit keys: threefry2x32, typed keys, samplers (mirrors `jax.random`)."""
from xjax._src.random.keys import (
    PRNGKey as PRNGKey,
    bits as bits,
    clone as clone,
    default_prng_impl as default_prng_impl,
    fold_in as fold_in,
    key as key,
    key_data as key_data,
    key_dtype as key_dtype,
    key_impl as key_impl,
    split as split,
    wrap_key_data as wrap_key_data,
)
from xjax._src.random.distributions import (
    normal as normal,
    uniform as uniform,
)
from xjax._src.random.distributions import (
    bernoulli as bernoulli,
    cauchy as cauchy,
    double_sided_maxwell as double_sided_maxwell,
    exponential as exponential,
    gumbel as gumbel,
    laplace as laplace,
    logistic as logistic,
    lognormal as lognormal,
    maxwell as maxwell,
    pareto as pareto,
    rademacher as rademacher,
    rayleigh as rayleigh,
    triangular as triangular,
    truncated_normal as truncated_normal,
    wald as wald,
    weibull_min as weibull_min,
)
from xjax._src.random.discrete import (
    categorical as categorical,
    choice as choice,
    geometric as geometric,
    permutation as permutation,
    randint as randint,
)
from xjax._src.random.gamma import (
    ball as ball,
    beta as beta,
    binomial as binomial,
    chisquare as chisquare,
    dirichlet as dirichlet,
    f as f,
    gamma as gamma,
    generalized_normal as generalized_normal,
    loggamma as loggamma,
    multinomial as multinomial,
    poisson as poisson,
    t as t,
)
from xjax._src.random.matrix_samplers import (
    multivariate_normal as multivariate_normal,
    orthogonal as orthogonal,
)

# The RngBitGenerator PRNGs register themselves ("rbg", "unsafe_rbg"): jax_default_prng_impl
# and `impl=` name them.
from xjax._src.random import rbg as _rbg  # noqa: E402,F401
