"""SciPy's special functions on xjax arrays (mirrors `jax.scipy.special`)."""
from xjax._src.scipy.special import (
    bernoulli as bernoulli, beta as beta, betainc as betainc, betaln as betaln,
    boxcox as boxcox, boxcox1p as boxcox1p, comb as comb, digamma as digamma, entr as entr,
    erf as erf, erfc as erfc, erfinv as erfinv, expit as expit, factorial as factorial,
    gamma as gamma, gammainc as gammainc, gammaincc as gammaincc, gammaln as gammaln,
    gammasgn as gammasgn, i0 as i0, i0e as i0e, i1 as i1, i1e as i1e, kl_div as kl_div,
    log_ndtr as log_ndtr, log_softmax as log_softmax, loggamma as loggamma, logit as logit,
    logsumexp as logsumexp, multigammaln as multigammaln, ndtr as ndtr, ndtri as ndtri,
    poch as poch, polygamma as polygamma, rel_entr as rel_entr, softmax as softmax,
    spence as spence, xlog1py as xlog1py, xlogy as xlogy, zeta as zeta,
)
from xjax._src.scipy.special_hypergeometric import (
    bessel_jn as bessel_jn, hyp1f1 as hyp1f1, hyp2f1 as hyp2f1, owens_t as owens_t,
    sph_harm_y as sph_harm_y,
)
from xjax._src.scipy.special_integrals import (
    dawsn as dawsn, erfcx as erfcx, exp1 as exp1, expi as expi, expn as expn,
    fresnel as fresnel, sici as sici, wofz as wofz,
)
