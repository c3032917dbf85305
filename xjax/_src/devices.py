"""Device and process queries: `devices`, `local_devices`, `device_count`, `process_index`,
`process_count`, `default_backend`, `live_arrays` and their old `host_*` names (mirrors the
functions of the same names in `jax`)."""
from __future__ import annotations

import gc
import warnings

from xjax._src import backend
from xjax._src import backend as _xb  # where an argument is named `backend`, as in JAX
from xjax._src.array import Array


def devices(backend: str | None = None) -> list:
  """All devices of the backend, every process's (mirrors `jax.devices`).

  In a job of several processes (`jax.distributed.initialize`) the list is
  the same in every process; each device's `process_index` says whose it is.
  """
  check_backend(backend)
  return _xb.devices()


def local_devices(process_index: int | None = None, backend: str | None = None,
                  host_id: int | None = None) -> list:
  """The devices of process `process_index` (default: this one).

  Raises:
    ValueError: `process_index` is not a process of the job.

  Mirrors `jax.local_devices`.
  """
  if host_id is not None:
    warnings.warn("The argument to jax.local_devices has been renamed from `host_id` to "
                  "`process_index`. This alias will eventually be removed; please update "
                  "your code.", stacklevel=2)
    process_index = host_id
  check_backend(backend)
  if process_index is None:
    return _xb.local_devices()
  if not 0 <= process_index < process_count(backend):
    raise ValueError(f"Unknown process_index {process_index}")
  return [d for d in _xb.devices() if d.process_index == process_index]


def device_count(backend: str | None = None) -> int:
  """The number of devices of all processes (mirrors `jax.device_count`)."""
  return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
  """The number of this process's devices (mirrors `jax.local_device_count`)."""
  check_backend(backend)
  return len(_xb.local_devices())


def process_index(backend: str | None = None) -> int:
  """This process's index in the job, 0 when it runs alone (mirrors `jax.process_index`)."""
  check_backend(backend)
  return _xb.process_index()


def process_count(backend: str | None = None) -> int:
  """The number of processes whose devices the backend knows (mirrors `jax.process_count`)."""
  check_backend(backend)
  return _xb.process_count()


def process_indices(backend: str | None = None) -> list[int]:
  """``[0, ..., process_count() - 1]`` (mirrors `jax.process_indices`)."""
  return list(range(process_count(backend)))


def host_id(backend: str | None = None) -> int:
  """The old name of `process_index`: warns (UserWarning, as JAX) and returns it."""
  warnings.warn("jax.process_index has been renamed to jax.process_index. This alias will "
                "eventually be removed; please update your code.", stacklevel=2)
  return process_index(backend)


def host_count(backend: str | None = None) -> int:
  """The old name of `process_count`: warns (UserWarning, as JAX) and returns it."""
  warnings.warn("jax.process_count has been renamed to jax.process_count. This alias will "
                "eventually be removed; please update your code.", stacklevel=2)
  return process_count(backend)


def host_ids(backend: str | None = None) -> list[int]:
  """The old name of `process_indices`: warns (UserWarning, as JAX) and returns it."""
  warnings.warn("jax.process_indexs has been renamed to jax.process_indices. This alias will "
                "eventually be removed; please update your code.", stacklevel=2)
  return process_indices(backend)


def default_backend() -> str:
  """The name of the default platform, e.g. 'cpu' (mirrors `jax.default_backend`)."""
  return backend.platform()


def check_backend(name):
  """Raises JAX's RuntimeError unless `name` is None or the platform present."""
  if name is not None and name != backend.platform() and not (
      name == "cuda" and backend.platform() == "gpu"):
    raise RuntimeError(f"Unknown backend {name}. Available backends are ['{backend.platform()}'].")


def live_arrays(platform=None) -> list:
  """All Arrays of `platform` (default: the default backend) that are alive and not deleted.

  Mirrors `jax.live_arrays`.
  """
  check_backend(platform)
  return [x for x in gc.get_objects() if type(x) is Array and not x.is_deleted()]
