"""xjax's stand-in for JAX's internal `jax._src.test_util`: what JAX's own test files use.

JAX's test files (``from jax._src import test_util as jtu``) run on xjax through this package
(`jax._src.test_util` resolves to it under `xjax.install_as_jax`; `tools/jax_tests.py` runs
them). It is written over xjax's public API, mirroring the semantics of JAX's helpers:

* `rand`: argument makers (`rand_default`, `rand_positive`, ... of JAX's distributions);
* `params`: `sample_product` (``JAX_NUM_GENERATED_CASES``), named cases, `dtypes` lists;
* `case`: `JaxTestCase` (JAX's test configuration, `assertAllClose`, `_CompileAndCheck`,
  `_CheckAgainstNumpy`), tolerances, configuration contexts;
* `env`: device filters, meshes, compile counters, output capture.

A name of JAX's test_util that is missing here fails the tests that use it (AttributeError):
such a test is counted as failing, never as passing.
"""
from xjax._src.jaxtest.case import (  # noqa: F401
    BufferDonationTestCase, JaxTestCase, _assert_numpy_allclose, _check_dtypes_match,
    _dtype, check_close, check_eq, check_raises, check_raises_regexp, default_gradient_tolerance,
    default_tolerance, global_config_context, ignore_warning, is_sequence, join_tolerance,
    num_float_bits, promote_like_jnp, strict_promotion_if_dtypes_match,
    thread_local_config_context, to_default_dtype, tolerance, with_config, with_global_config,
    with_jax_dtype_defaults)
from xjax._src.jaxtest.env import (  # noqa: F401
    TEST_NUM_THREADS, JaxTestLoader, assert_num_jit_and_pmap_compilations, capture_stderr,
    capture_stdout, count_device_put, count_jit_and_pmap_lowerings, count_jit_compilation_cache_miss,
    count_jit_tracing_cache_miss, count_pjit_cpp_cache_miss, count_primitive_compiles,
    create_mesh, device_supports_buffer_donation, is_asan, is_cloud_tpu, is_cloud_tpu_at_least,
    is_cuda_compute_capability_at_least, is_cuda_compute_capability_equal,
    is_cuda_version_at_least, is_device_cuda, is_device_rocm, is_device_tpu,
    is_device_tpu_at_least, is_gil_disabled, is_msan, is_optimized_build, is_running_under_pytest,
    is_sanitized, is_tsan, jaxlib_version, pjrt_c_api_version_at_least, pytest_mark_if_available,
    request_cpu_devices, run_on_devices, set_env, skip_on_devices, skip_on_flag,
    skip_under_pytest, stablehlo_version_at_least, test_device_matches, thread_unsafe_test,
    thread_unsafe_test_class, with_explicit_mesh, with_mesh, with_mesh_from_kwargs)
from xjax._src.jaxtest.jaxprs import (  # noqa: F401
    JIT_IMPLEMENTATION, assert_dot_precision, assert_dot_preferred_element_type, fwd_bwd_jaxprs,
    iter_eqns)
from xjax._src.jaxtest.mpmath_util import numpy_with_mpmath, vectorize_with_mpmath  # noqa: F401
from xjax._src.jaxtest.params import (  # noqa: F401
    MAX_CASES_SAMPLING_RETRIES, NUM_GENERATED_CASES, SKIP_SLOW_TESTS, cases_from_gens,
    device_under_test, dtypes, named_cases_from_sampler, numpy_version, parameterized_filterable,
    parse_version, sample_product, sample_product_testcases, sanitize_test_name,
    supported_dtypes)
from xjax._src.jaxtest.rand import (  # noqa: F401
    NUMPY_SCALAR_SHAPE, PYTHON_SCALAR_SHAPE, ScalarShape, _cast_to_shape, _dims_of_shape,
    complex_plane_sample, dtype_str, format_shape_dtype_string, is_valid_shape, rand_bool,
    rand_default, rand_fullrange, rand_indices_unique_along_axis, rand_int, rand_like,
    rand_nonzero, rand_not_small, rand_positive, rand_small, rand_small_positive,
    rand_some_equal, rand_some_inf, rand_some_inf_and_nan, rand_some_nan, rand_some_zero,
    rand_uniform, rand_unique_int)
from xjax._src.test_util import (  # noqa: F401
    EPS, check_grads, check_jvp, check_vjp, numerical_jvp)
