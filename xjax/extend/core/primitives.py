"""JAX's primitives under their JAX names (mirrors `jax.extend.core.primitives`).

Each name is the xjax primitive of the same JAX name; JAX primitives that xjax does not
have (`ragged_all_to_all_p`, `xla_pmap_p`) are absent.
"""
from xjax._src.call import (
    call_p as call_p,
    closed_call_p as closed_call_p,
)
from xjax._src.checkpoint import (
    name_p as name_p,
    checkpoint_p as remat_p,
)
from xjax._src.custom_derivatives import (
    custom_jvp_call_p as custom_jvp_call_p,
    custom_vjp_call_p as custom_vjp_call_p,
    custom_lin_p as custom_lin_p,
)
from xjax._src.device_put import (
    device_put_p as device_put_p,
)
from xjax._src.interpreters.ad import (
    stop_gradient_p as stop_gradient_p,
    add_any_p as add_jaxvals_p,
)
from xjax._src.jit import (
    jit_p as jit_p,
)
from xjax._src.lax.ann import (
    approx_top_k_p as approx_top_k_p,
)
from xjax._src.lax.control_flow.common import (
    empty2_p as empty2_p,
)
from xjax._src.lax.control_flow.conditionals import (
    cond_p as cond_p,
)
from xjax._src.lax.control_flow.loops import (
    while_p as while_p,
)
from xjax._src.lax.control_flow.scan import (
    scan_p as scan_p,
)
from xjax._src.lax.control_flow.solves import (
    linear_solve_p as linear_solve_p,
)
from xjax._src.lax.convolution import (
    conv_general_dilated_p as conv_general_dilated_p,
)
from xjax._src.lax.dot import (
    dot_general_p as dot_general_p,
)
from xjax._src.lax.elementwise import (
    abs_p as abs_p,
    add_p as add_p,
    and_p as and_p,
    bitcast_convert_type_p as bitcast_convert_type_p,
    ceil_p as ceil_p,
    clamp_p as clamp_p,
    clz_p as clz_p,
    complex_p as complex_p,
    conj_p as conj_p,
    convert_element_type_p as convert_element_type_p,
    copy_p as copy_p,
    div_p as div_p,
    eq_p as eq_p,
    exp_p as exp_p,
    floor_p as floor_p,
    ge_p as ge_p,
    gt_p as gt_p,
    imag_p as imag_p,
    integer_pow_p as integer_pow_p,
    is_finite_p as is_finite_p,
    le_p as le_p,
    log1p_p as log1p_p,
    lt_p as lt_p,
    max_p as max_p,
    min_p as min_p,
    mul_p as mul_p,
    ne_p as ne_p,
    neg_p as neg_p,
    nextafter_p as nextafter_p,
    not_p as not_p,
    or_p as or_p,
    population_count_p as population_count_p,
    real_p as real_p,
    reduce_precision_p as reduce_precision_p,
    rem_p as rem_p,
    round_p as round_p,
    select_n_p as select_n_p,
    shift_left_p as shift_left_p,
    shift_right_arithmetic_p as shift_right_arithmetic_p,
    shift_right_logical_p as shift_right_logical_p,
    sign_p as sign_p,
    square_p as square_p,
    sub_p as sub_p,
    xor_p as xor_p,
)
from xjax._src.lax.fft import (
    fft_p as fft_p,
)
from xjax._src.lax.gather_scatter import (
    gather_p as gather_p,
    scatter_add_p as scatter_add_p,
    scatter_max_p as scatter_max_p,
    scatter_min_p as scatter_min_p,
    scatter_mul_p as scatter_mul_p,
    scatter_p as scatter_p,
)
from xjax._src.lax.linalg.cholesky import (
    cholesky_p as cholesky_p,
)
from xjax._src.lax.linalg.eig import (
    eig_p as eig_p,
)
from xjax._src.lax.linalg.eigh import (
    eigh_p as eigh_p,
)
from xjax._src.lax.linalg.hessenberg import (
    hessenberg_p as hessenberg_p,
)
from xjax._src.lax.linalg.lu import (
    lu_p as lu_p,
)
from xjax._src.lax.linalg.qr import (
    householder_product_p as householder_product_p,
    qr_p as qr_p,
)
from xjax._src.lax.linalg.schur import (
    schur_p as schur_p,
)
from xjax._src.lax.linalg.svd import (
    svd_p as svd_p,
)
from xjax._src.lax.linalg.triangular_solve import (
    triangular_solve_p as triangular_solve_p,
)
from xjax._src.lax.linalg.tridiagonal import (
    tridiagonal_p as tridiagonal_p,
    tridiagonal_solve_p as tridiagonal_solve_p,
)
from xjax._src.lax.misc_ops import (
    eq_to_p as eq_to_p,
    le_to_p as le_to_p,
    lt_to_p as lt_to_p,
    rng_bit_generator_p as rng_bit_generator_p,
    rng_uniform_p as rng_uniform_p,
)
from xjax._src.lax.parallel import (
    all_gather_p as all_gather_p,
    all_to_all_p as all_to_all_p,
    axis_index_p as axis_index_p,
    pmax_p as pmax_p,
    pmin_p as pmin_p,
    ppermute_p as ppermute_p,
    psum_p as psum_p,
)
from xjax._src.lax.reductions import (
    argmax_p as argmax_p,
    argmin_p as argmin_p,
    reduce_and_p as reduce_and_p,
    reduce_max_p as reduce_max_p,
    reduce_min_p as reduce_min_p,
    reduce_or_p as reduce_or_p,
    reduce_p as reduce_p,
    reduce_prod_p as reduce_prod_p,
    reduce_sum_p as reduce_sum_p,
    reduce_xor_p as reduce_xor_p,
    cumlogsumexp_p as cumlogsumexp_p,
    cummax_p as cummax_p,
    cummin_p as cummin_p,
    cumprod_p as cumprod_p,
    cumsum_p as cumsum_p,
)
from xjax._src.lax.slicing import (
    dynamic_slice_p as dynamic_slice_p,
    dynamic_update_slice_p as dynamic_update_slice_p,
    slice_p as slice_p,
)
from xjax._src.lax.sorting import (
    sort_p as sort_p,
    top_k_p as top_k_p,
)
from xjax._src.lax.special import (
    bessel_i0e_p as bessel_i0e_p,
    bessel_i1e_p as bessel_i1e_p,
    igammac_p as igammac_p,
    igamma_grad_a_p as igamma_grad_a_p,
    igamma_p as igamma_p,
    regularized_incomplete_beta_p as regularized_incomplete_beta_p,
    zeta_p as zeta_p,
)
from xjax._src.lax.structural import (
    broadcast_in_dim_p as broadcast_in_dim_p,
    concatenate_p as concatenate_p,
    iota_p as iota_p,
    pad_p as pad_p,
    reshape_p as reshape_p,
    rev_p as rev_p,
    squeeze_p as squeeze_p,
    transpose_p as transpose_p,
)
from xjax._src.lax.tokens import (
    after_all_p as after_all_p,
    create_token_p as create_token_p,
)
from xjax._src.lax.transcendental import (
    acos_p as acos_p,
    acosh_p as acosh_p,
    asin_p as asin_p,
    asinh_p as asinh_p,
    atan_p as atan_p,
    atan2_p as atan2_p,
    atanh_p as atanh_p,
    cbrt_p as cbrt_p,
    cos_p as cos_p,
    cosh_p as cosh_p,
    exp2_p as exp2_p,
    expm1_p as expm1_p,
    log_p as log_p,
    logistic_p as logistic_p,
    pow_p as pow_p,
    rsqrt_p as rsqrt_p,
    sin_p as sin_p,
    sinh_p as sinh_p,
    sqrt_p as sqrt_p,
    tan_p as tan_p,
    tanh_p as tanh_p,
    digamma_p as digamma_p,
    erfc_p as erfc_p,
    erf_inv_p as erf_inv_p,
    erf_p as erf_p,
    lgamma_p as lgamma_p,
    polygamma_p as polygamma_p,
)
from xjax._src.lax.windowed_reductions import (
    reduce_window_max_p as reduce_window_max_p,
    reduce_window_min_p as reduce_window_min_p,
    reduce_window_p as reduce_window_p,
    reduce_window_sum_p as reduce_window_sum_p,
    select_and_gather_add_p as select_and_gather_add_p,
    select_and_scatter_p as select_and_scatter_p,
    select_and_scatter_add_p as select_and_scatter_add_p,
)
from xjax._src.random.gamma import (
    random_gamma_p as random_gamma_p,
)
from xjax._src.random.prng import (
    random_bits_p as random_bits_p,
    random_fold_in_p as random_fold_in_p,
    random_seed_p as random_seed_p,
    random_split_p as random_split_p,
)
from xjax._src.random.threefry import (
    threefry2x32_p as threefry2x32_p,
)
from xjax._src.sharding.constraints import (
    sharding_constraint_p as sharding_constraint_p,
)
from xjax._src.state.primitives import (
    get_p as get_p,
    swap_p as swap_p,
)
