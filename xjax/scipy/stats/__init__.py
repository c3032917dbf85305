"""SciPy's statistical functions on xjax arrays (mirrors `jax.scipy.stats`).

Each distribution is a submodule (`norm`, `gamma`, `poisson`, ...) holding its
`logpdf`/`pdf`/`cdf`/... functions, as in JAX; submodules load on first use.
"""
import importlib as _importlib

_DISTRIBUTIONS = (
    "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
    "gamma", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "multinomial",
    "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t", "truncnorm", "uniform",
    "vonmises", "wrapcauchy")
_FUNCTIONS = {"gaussian_kde": "kde", "mode": "summary", "rankdata": "summary", "sem": "summary"}


def __getattr__(name):
  if name in _DISTRIBUTIONS:
    return _importlib.import_module(f"{__name__}.{name}")
  if name in _FUNCTIONS:
    module = _importlib.import_module(f"xjax._src.scipy.stats.{_FUNCTIONS[name]}")
    return getattr(module, name)
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
  return sorted((*_DISTRIBUTIONS, *_FUNCTIONS))
