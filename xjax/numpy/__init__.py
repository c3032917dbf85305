"""NumPy's API over lax (mirrors `jax.numpy`)."""
from xjax._src.numpy import array_methods as _array_methods  # noqa: F401 - installs methods
from xjax._src.numpy.creation import (
    arange as arange, array as array, asarray as asarray, copy as copy, empty as empty,
    empty_like as empty_like, eye as eye, full as full, full_like as full_like,
    identity as identity, linspace as linspace, ones as ones, ones_like as ones_like,
    zeros as zeros, zeros_like as zeros_like,
)
from xjax._src.numpy.indexing import take as take, take_along_axis as take_along_axis
from xjax._src.numpy.lax_numpy import (
    allclose as allclose, argwhere as argwhere, array_equal as array_equal,
    array_equiv as array_equiv, array_split as array_split, bincount as bincount, atleast_1d as atleast_1d,
    atleast_2d as atleast_2d, atleast_3d as atleast_3d, broadcast_arrays as broadcast_arrays,
    broadcast_shapes as broadcast_shapes, broadcast_to as broadcast_to, can_cast as can_cast,
    column_stack as column_stack, concat as concat, concatenate as concatenate,
    dstack as dstack, expand_dims as expand_dims, flatnonzero as flatnonzero, flip as flip,
    fliplr as fliplr, flipud as flipud, hsplit as hsplit, hstack as hstack,
    iscomplexobj as iscomplexobj, isclose as isclose, isscalar as isscalar,
    matrix_transpose as matrix_transpose, moveaxis as moveaxis, ndim as ndim,
    nonzero as nonzero, permute_dims as permute_dims,
    promote_types as promote_types, ravel as ravel, repeat as repeat, reshape as reshape,
    result_type as result_type, roll as roll, shape as shape,
    size as size, split as split, squeeze as squeeze, stack as stack, swapaxes as swapaxes,
    tile as tile, transpose as transpose, tril as tril, triu as triu, vsplit as vsplit,
    vstack as vstack, where as where,
)
from xjax._src.numpy.reductions import (
    all as all, amax as amax, amin as amin, any as any, argmax as argmax, argmin as argmin,
    count_nonzero as count_nonzero, cumprod as cumprod, cumsum as cumsum,
    cumulative_prod as cumulative_prod, cumulative_sum as cumulative_sum, max as max,
    mean as mean, min as min, nanargmax as nanargmax, nanargmin as nanargmin,
    nancumprod as nancumprod, nancumsum as nancumsum, nanmax as nanmax, nanmean as nanmean,
    nanmin as nanmin, nanprod as nanprod, nanstd as nanstd, nansum as nansum,
    nanvar as nanvar, prod as prod, ptp as ptp, std as std, sum as sum, var as var,
)
from xjax._src.numpy.scalar_types import (
    bfloat16 as bfloat16, bool_ as bool_, cdouble as cdouble, complex128 as complex128,
    complex64 as complex64, complex_ as complex_, csingle as csingle, double as double,
    float16 as float16, float32 as float32, float64 as float64,
    float8_e4m3fn as float8_e4m3fn, float8_e5m2 as float8_e5m2, float_ as float_,
    int16 as int16, int32 as int32, int64 as int64, int8 as int8, int_ as int_,
    ndarray as ndarray, single as single, uint as uint, uint16 as uint16, uint32 as uint32,
    uint64 as uint64, uint8 as uint8,
)
from xjax._src.numpy.sorting import argsort as argsort, sort as sort
from xjax._src.numpy.tensor_contractions import (
    dot as dot, inner as inner, matmul as matmul, outer as outer, tensordot as tensordot,
    vdot as vdot,
)
from xjax._src.numpy.ufuncs import (
    abs as abs, absolute as absolute, acos as acos, acosh as acosh, add as add,
    arccos as arccos, arccosh as arccosh, arcsin as arcsin, arcsinh as arcsinh,
    arctan as arctan, arctan2 as arctan2, arctanh as arctanh, around as around, asin as asin,
    asinh as asinh, atan as atan, atan2 as atan2, atanh as atanh, bitwise_and as bitwise_and,
    bitwise_invert as bitwise_invert, bitwise_left_shift as bitwise_left_shift,
    bitwise_not as bitwise_not, bitwise_or as bitwise_or,
    bitwise_right_shift as bitwise_right_shift, bitwise_xor as bitwise_xor, cbrt as cbrt,
    ceil as ceil, clip as clip, conj as conj, conjugate as conjugate, copysign as copysign,
    cos as cos, cosh as cosh, deg2rad as deg2rad, degrees as degrees, divide as divide,
    divmod as divmod, equal as equal, exp as exp, exp2 as exp2, expm1 as expm1, fabs as fabs,
    float_power as float_power, floor as floor, floor_divide as floor_divide,
    fmax as fmax, fmin as fmin, fmod as fmod, greater as greater,
    greater_equal as greater_equal, heaviside as heaviside, hypot as hypot, imag as imag,
    invert as invert, isfinite as isfinite, isinf as isinf, isnan as isnan,
    isneginf as isneginf, isposinf as isposinf, left_shift as left_shift, less as less,
    less_equal as less_equal, log as log, log10 as log10, log1p as log1p, log2 as log2,
    logaddexp as logaddexp, logical_and as logical_and, logical_not as logical_not,
    logical_or as logical_or, logical_xor as logical_xor, maximum as maximum,
    minimum as minimum, mod as mod, multiply as multiply, negative as negative,
    nextafter as nextafter, not_equal as not_equal, positive as positive, pow as pow,
    power as power, rad2deg as rad2deg, radians as radians, real as real,
    reciprocal as reciprocal, remainder as remainder, right_shift as right_shift,
    rint as rint, round as round, sign as sign, signbit as signbit, sin as sin, sinh as sinh,
    sqrt as sqrt, square as square, subtract as subtract, tan as tan, tanh as tanh,
    true_divide as true_divide, trunc as trunc,
)
from xjax._src.dtypes import (
    finfo as finfo, iinfo as iinfo, isdtype as isdtype,
)
from numpy import (
    complexfloating as complexfloating, e as e, euler_gamma as euler_gamma,
    floating as floating, generic as generic, inexact as inexact, inf as inf,
    integer as integer, nan as nan, newaxis as newaxis, number as number, pi as pi,
    signedinteger as signedinteger, unsignedinteger as unsignedinteger,
)
from numpy import dtype as dtype

bool = bool_  # noqa: A001 - NumPy's name
# --- structured control flow (issue 5) ---
from xjax._src.numpy.conditionals import piecewise as piecewise, select as select
# --- issue 13: more of jax.numpy ---
from xjax._src.numpy.creation import geomspace as geomspace, logspace as logspace
from xjax._src.numpy.sorting import (
    argpartition as argpartition, lexsort as lexsort, partition as partition,
    sort_complex as sort_complex,
)
from xjax._src.numpy.ufuncs import (
    angle as angle, bitwise_count as bitwise_count, logaddexp2 as logaddexp2,
)
from xjax._src.numpy.bits import packbits as packbits, unpackbits as unpackbits
from xjax._src.numpy.multi_index import (
    ravel_multi_index as ravel_multi_index, unravel_index as unravel_index,
)
from xjax._src.numpy.reductions import trapezoid as trapezoid
from xjax._src.numpy.tensor_contractions import (
    matvec as matvec, vecdot as vecdot, vecmat as vecmat,
)
from xjax._src.numpy.functional import (
    apply_along_axis as apply_along_axis, apply_over_axes as apply_over_axes, astype as astype,
    fromfunction as fromfunction, iterable as iterable,
)
from xjax._src.numpy.io import (
    array_repr as array_repr, array_str as array_str, from_dlpack as from_dlpack,
    frombuffer as frombuffer, fromfile as fromfile, fromiter as fromiter,
    fromstring as fromstring, get_printoptions as get_printoptions, load as load,
    printoptions as printoptions, save as save, savez as savez,
    set_printoptions as set_printoptions,
)
from xjax._src.numpy.einsum import einsum as einsum, einsum_path as einsum_path
from xjax._src.numpy.lax_numpy import issubdtype as issubdtype
from numpy import (
    character as character, flexible as flexible, object_ as object_,
)
from numpy.exceptions import ComplexWarning as ComplexWarning
# --- statistics: searchsorted, quantiles, average, cov, histograms (issue 13) ---
from xjax._src.numpy.statistics import (
    average as average, corrcoef as corrcoef, cov as cov, digitize as digitize,
    histogram as histogram, histogram2d as histogram2d, histogram_bin_edges as histogram_bin_edges,
    histogramdd as histogramdd, median as median, nanmedian as nanmedian,
    nanpercentile as nanpercentile, nanquantile as nanquantile, percentile as percentile,
    quantile as quantile, searchsorted as searchsorted,
)
from xjax._src.numpy.math_extras import (
    bartlett as bartlett, blackman as blackman, cross as cross, diff as diff,
    ediff1d as ediff1d, frexp as frexp, gcd as gcd, gradient as gradient, hamming as hamming,
    hanning as hanning, i0 as i0, interp as interp, iscomplex as iscomplex, isreal as isreal,
    isrealobj as isrealobj, kaiser as kaiser, kron as kron, lcm as lcm, ldexp as ldexp,
    modf as modf, nan_to_num as nan_to_num, sinc as sinc, spacing as spacing, unwrap as unwrap,
)
from xjax._src.numpy.array_api_metadata import (
    __array_api_version__ as __array_api_version__,
    __array_namespace_info__ as __array_namespace_info__,
)
# --- pad in every mode (issue 13) ---
from xjax._src.numpy.pad import pad as pad
# --- index tricks and triangle/index helpers (issue 13) ---
from xjax._src.numpy.index_tricks import (
    c_ as c_, diag_indices as diag_indices, diag_indices_from as diag_indices_from,
    index_exp as index_exp, indices as indices, ix_ as ix_, mask_indices as mask_indices,
    meshgrid as meshgrid, mgrid as mgrid, ogrid as ogrid, r_ as r_, s_ as s_, tri as tri,
    tril_indices as tril_indices, tril_indices_from as tril_indices_from,
    triu_indices as triu_indices, triu_indices_from as triu_indices_from, vander as vander,
)
# --- polynomials, vectorize, convolve/correlate, trim_zeros (issue 13) ---
from xjax._src.numpy.polynomial import (
    convolve as convolve, correlate as correlate, poly as poly, polyadd as polyadd,
    polyder as polyder, polydiv as polydiv, polyint as polyint, polymul as polymul,
    polysub as polysub, polyval as polyval, trim_zeros as trim_zeros,
)
from xjax._src.numpy.vectorize import vectorize as vectorize
# --- array manipulation, part A: append, block, delete, insert, ... (issue 13) ---
from xjax._src.numpy.manipulation import (
    append as append, block as block, delete as delete, dsplit as dsplit, insert as insert,
    resize as resize, rollaxis as rollaxis, rot90 as rot90, unstack as unstack,
)

# --- narrow dtypes, ufunc objects and frompyfunc (issue 13) ---
from xjax._src.numpy.scalar_types import (
    float4_e2m1fn as float4_e2m1fn, float6_e2m3fn as float6_e2m3fn,
    float6_e3m2fn as float6_e3m2fn, float8_e3m4 as float8_e3m4, float8_e4m3 as float8_e4m3,
    float8_e4m3b11fnuz as float8_e4m3b11fnuz, float8_e4m3fnuz as float8_e4m3fnuz,
    float8_e5m2fnuz as float8_e5m2fnuz, float8_e8m0fnu as float8_e8m0fnu, int1 as int1,
    int2 as int2, int4 as int4, uint1 as uint1, uint2 as uint2, uint4 as uint4)
from xjax._src.numpy.ufunc_api import frompyfunc as frompyfunc, ufunc as ufunc
# --- selection and diagonals: choose, compress, put, diag, trace, ... (issue 13) ---
from xjax._src.numpy.selection import (
    choose as choose, compress as compress, diag as diag, diagflat as diagflat,
    diagonal as diagonal, extract as extract, fill_diagonal as fill_diagonal, place as place,
    put as put, put_along_axis as put_along_axis, trace as trace,
)
# --- set operations: unique, union1d, intersect1d, setdiff1d, setxor1d, isin (issue 13) ---
from xjax._src.numpy.setops import (
    intersect1d as intersect1d, isin as isin, setdiff1d as setdiff1d, setxor1d as setxor1d,
    union1d as union1d, unique as unique, unique_all as unique_all,
    unique_counts as unique_counts, unique_inverse as unique_inverse,
    unique_values as unique_values,
)
# --- polyfit and roots, on jnp.linalg (issue 14) ---
from xjax._src.numpy.polynomial import polyfit as polyfit, roots as roots
# --- linalg and fft (issue 14): imported on first use (import time, issue 34) ---
from xjax._src import lazy_loader as _lazy_loader

__getattr__, __dir__ = _lazy_loader.attach(globals(), {"fft", "linalg"})
