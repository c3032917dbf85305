"""xjax: JAX's programming model written from scratch in Python, compiled by XLA.

Use it as ``import xjax as jax; import xjax.numpy as jnp``.
"""
from xjax._src.config import config as config
from xjax._src.config import (default_device as default_device,
                              default_matmul_precision as default_matmul_precision,
                              disable_jit as disable_jit, enable_checks as enable_checks,
                              numpy_dtype_promotion as numpy_dtype_promotion,
                              numpy_rank_promotion as numpy_rank_promotion,
                              threefry_partitionable as threefry_partitionable)
from xjax._src.config import (allow_f16_reductions as allow_f16_reductions,
                              check_tracer_leaks as check_tracer_leaks,
                              checking_leaks as checking_leaks, debug_infs as debug_infs,
                              debug_key_reuse as debug_key_reuse, debug_nans as debug_nans,
                              enable_custom_prng as enable_custom_prng,
                              enable_x64 as enable_x64,
                              explain_cache_misses as explain_cache_misses,
                              legacy_prng_key as legacy_prng_key,
                              log_compiles as log_compiles,
                              make_user_context as make_user_context,
                              no_execution as no_execution, no_tracing as no_tracing,
                              softmax_custom_jvp as softmax_custom_jvp,
                              transfer_guard as transfer_guard,
                              transfer_guard_device_to_device as transfer_guard_device_to_device,
                              transfer_guard_device_to_host as transfer_guard_device_to_host,
                              transfer_guard_host_to_device as transfer_guard_host_to_device)
from xjax._src.array import Array as Array
from xjax._src.backend import Device as Device
from xjax._src.sharding.mesh import make_mesh as make_mesh, set_mesh as set_mesh
from xjax._src.sharding.partition_spec import PartitionSpec as P
from xjax._src.sharding.shardings import NamedSharding as NamedSharding
from xjax._src.array import Shard as Shard
from xjax._src.sharding.constraints import reshard as reshard
from xjax._src.sharding.array_construction import (
    make_array_from_callback as make_array_from_callback,
    make_array_from_single_device_arrays as make_array_from_single_device_arrays)
from xjax._src.multihost_utils import (
    make_array_from_process_local_data as make_array_from_process_local_data)
from xjax._src.jit import jit as jit
from xjax._src.shape_dtype_struct import ShapeDtypeStruct as ShapeDtypeStruct
from xjax._src.device_put import (block_until_ready as block_until_ready,
                                  copy_to_host_async as copy_to_host_async,
                                  device_get as device_get, device_put as device_put)
from xjax._src.devices import (default_backend as default_backend, device_count as device_count,
                               devices as devices, host_count as host_count, host_id as host_id,
                               host_ids as host_ids, live_arrays as live_arrays,
                               local_device_count as local_device_count,
                               local_devices as local_devices, process_count as process_count,
                               process_index as process_index, process_indices as process_indices)
from xjax._src.api import eval_shape as eval_shape, make_jaxpr as make_jaxpr
from xjax._src.api import (grad as grad, jvp as jvp, linearize as linearize,
                           value_and_grad as value_and_grad, vjp as vjp)
from xjax._src.jacobian import (hessian as hessian, jacfwd as jacfwd, jacobian as jacobian,
                                jacrev as jacrev)
from xjax._src.checkpoint import (checkpoint as checkpoint,
                                  checkpoint_policies as checkpoint_policies, remat as remat)
from xjax._src.core import ShapedArray as ShapedArray
from xjax._src.dtypes import float0 as float0
from xjax._src.vmap import vmap as vmap
from xjax._src.callback import pure_callback as pure_callback
from xjax._src.api import effects_barrier as effects_barrier
from xjax._src.indexing import ds as ds
from xjax._src.api import (clear_caches as clear_caches,
                           ensure_compile_time_eval as ensure_compile_time_eval,
                           named_call as named_call,
                           named_scope as named_scope,
                           print_environment_info as print_environment_info, typeof as typeof)
from xjax._src.custom_derivatives import custom_jvp as custom_jvp, custom_vjp as custom_vjp
from xjax._src.custom_gradient import (closure_convert as closure_convert,
                                       custom_gradient as custom_gradient)
from xjax._src.linear_transpose import (fwd_and_bwd as fwd_and_bwd,
                                        linear_transpose as linear_transpose)

from xjax import core as core
from xjax import ad_checkpoint as ad_checkpoint
from xjax import custom_batching as custom_batching
from xjax import custom_derivatives as custom_derivatives
from xjax import debug as debug
from xjax import distributed as distributed
from xjax import experimental as experimental
from xjax import dtypes as dtypes
from xjax import errors as errors
from xjax import interpreters as interpreters  # as JAX: jax.interpreters.ad etc. after import
from xjax import lax as lax
from xjax import lib as lib
from xjax import numpy as numpy
from xjax import ops as ops
from xjax import random as random
from xjax import sharding as sharding
from xjax import stages as stages
from xjax import api_util as api_util
from xjax import monitoring as monitoring
from xjax import scipy as scipy
from xjax import ref as ref
from xjax.ref import (Ref as Ref, empty_ref as empty_ref, free_ref as free_ref,
                      freeze as freeze, new_ref as new_ref)
from xjax import tree as tree
from xjax import tree_util as tree_util
from xjax import typing as typing

from xjax._src.version import __version__ as __version__
# As JAX's `jax.ad`: the markers of `VJP.with_refs`.
from types import SimpleNamespace as _SimpleNamespace
from xjax._src import api as _api
ad = _SimpleNamespace(DontWant=_api.DontWant, DidntWant=_api.DidntWant,
                      GradRef=_api.GradRef, GradValue=_api.GradValue)
del _SimpleNamespace, _api
from xjax._src.shard_map import shard_map as shard_map
from xjax._src.shard_map import smap as smap
from xjax._src.pmap import pmap as pmap
from xjax._src.version import __version_info__ as __version_info__
from xjax._src.jax_compat import install_as_jax as install_as_jax

# Families imported on first use, as JAX's lazy loaders do (import time, issue 34).
from xjax._src import lazy_loader as _lazy_loader

__getattr__, __dir__ = _lazy_loader.attach(
    globals(), {"example_libraries", "export", "image", "nn"})
