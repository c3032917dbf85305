"""NumPy's API over lax (mirrors `jax.numpy`)."""
from xjax._src.numpy import array_methods as _array_methods  # noqa: F401 - installs operators
from xjax._src.numpy.lax_numpy import (
    array as array, asarray as asarray, dot as dot, empty as empty, empty_like as empty_like,
    full as full, full_like as full_like, ndarray as ndarray, ones as ones, ones_like as ones_like,
    zeros as zeros, zeros_like as zeros_like,
)
from xjax._src.numpy.ufuncs import (
    abs as abs, absolute as absolute, add as add, arccos as arccos, arccosh as arccosh,
    arcsin as arcsin, arcsinh as arcsinh, arctan as arctan, arctan2 as arctan2,
    arctanh as arctanh, around as around, bitwise_and as bitwise_and, bitwise_not as bitwise_not,
    bitwise_or as bitwise_or, bitwise_xor as bitwise_xor, cbrt as cbrt, ceil as ceil, cos as cos,
    cosh as cosh, divide as divide, equal as equal, exp as exp, exp2 as exp2, expm1 as expm1,
    floor as floor, floor_divide as floor_divide, fmod as fmod, greater as greater,
    greater_equal as greater_equal, invert as invert, isfinite as isfinite, isinf as isinf,
    isnan as isnan, left_shift as left_shift, less as less, less_equal as less_equal, log as log,
    log1p as log1p, logical_and as logical_and, logical_not as logical_not,
    logical_or as logical_or, logical_xor as logical_xor, maximum as maximum, minimum as minimum,
    mod as mod, multiply as multiply, negative as negative, nextafter as nextafter,
    not_equal as not_equal, positive as positive, power as power, reciprocal as reciprocal,
    remainder as remainder, right_shift as right_shift, round as round, sign as sign, sin as sin,
    sinh as sinh, sqrt as sqrt, square as square, subtract as subtract, tan as tan, tanh as tanh,
    true_divide as true_divide,
)
from xjax._src.dtypes import (
    bfloat16 as bfloat16, finfo as finfo, iinfo as iinfo, issubdtype as issubdtype,
    promote_types as promote_types, result_type as result_type,
)
from numpy import (
    bool_ as bool_, complex64 as complex64, complex128 as complex128, float16 as float16,
    float32 as float32, float64 as float64, int8 as int8, int16 as int16, int32 as int32,
    int64 as int64, uint8 as uint8, uint16 as uint16, uint32 as uint32, uint64 as uint64,
    inf as inf, nan as nan, pi as pi, e as e, newaxis as newaxis,
    integer as integer, floating as floating, complexfloating as complexfloating,
    inexact as inexact, number as number, signedinteger as signedinteger,
    unsignedinteger as unsignedinteger, generic as generic,
)
bool = bool_  # noqa: A001 - NumPy's name
