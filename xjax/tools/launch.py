"""Runs a program as N cooperating processes on this machine, for `jax.distributed`.

Usage::

  python -m xjax.tools.launch -n 2 [--devices-per-process K] [--port P]
      [--timeout S] [--grace G] SCRIPT [ARGS...]
  python -m xjax.tools.launch -n 2 ... -m MODULE [ARGS...]

Process ``i`` runs ``python SCRIPT ARGS`` (or ``python -m MODULE ARGS``) with

  JAX_COORDINATOR_ADDRESS=127.0.0.1:PORT  (PORT: --port, or a free port)
  JAX_NUM_PROCESSES=N
  JAX_PROCESS_ID=i
  XLA_FLAGS=... --xla_force_host_platform_device_count=K   (with --devices-per-process)

so that a plain ``jax.distributed.initialize()`` in the script finds its
arguments (cluster detection method ``"env"``). Each line a process writes is
forwarded prefixed with ``[i] ``, stdout to stdout and stderr to stderr. The
launcher waits for all processes; when one exits with a non-zero code it stops
the others (SIGTERM, then SIGKILL after ``--grace`` seconds) and exits with that
code. ``--timeout`` stops all of them after S seconds and exits with 124;
Ctrl-C (or SIGTERM to the launcher) stops all of them and exits with 130 (143).

The same script runs unchanged on a real cluster, one process per host:

* by hand (or any launcher): on every host set
  ``JAX_COORDINATOR_ADDRESS=<host0>:<port>`` (host0 being where process 0 runs,
  reachable from all hosts), ``JAX_NUM_PROCESSES=<number of hosts>`` and
  ``JAX_PROCESS_ID=<0 .. N-1, distinct>``, then run ``python SCRIPT``;
* under Slurm: ``srun --nodes=N --ntasks-per-node=1 python SCRIPT``; the
  coordinator is the job step's first node, and its port is derived from the
  job id unless ``JAX_COORDINATOR_PORT`` is set;
* under Open MPI: ``mpirun -np N python SCRIPT``.
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

_POLL_S = 0.05
_DEVICE_COUNT_FLAG = re.compile(r"\s*--xla_force_host_platform_device_count=\S*")
# Launcher options that take a value (for splitting argv at the program).
_VALUE_OPTIONS = {"-n", "--num-processes", "--devices-per-process", "--port", "--timeout", "--grace"}


class _Terminated(Exception):
  """The launcher received SIGTERM."""


def free_port(host: str = "127.0.0.1") -> int:
  """A TCP port on `host` that was free a moment ago (bound to port 0, then released)."""
  with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
    s.bind((host, 0))
    return s.getsockname()[1]


def child_environment(base: dict[str, str], *, coordinator_address: str, num_processes: int,
                      process_id: int, devices_per_process: int | None) -> dict[str, str]:
  """The environment of process `process_id`: `base` plus the JAX_* variables (and XLA_FLAGS)."""
  env = dict(base)
  env.update(JAX_COORDINATOR_ADDRESS=coordinator_address, JAX_NUM_PROCESSES=str(num_processes),
             JAX_PROCESS_ID=str(process_id), PYTHONUNBUFFERED="1")
  if devices_per_process is not None:
    flags = _DEVICE_COUNT_FLAG.sub("", env.get("XLA_FLAGS", "")).strip()
    env["XLA_FLAGS"] = (f"{flags} " if flags else "") + (
        f"--xla_force_host_platform_device_count={devices_per_process}")
  return env


def _split_argv(argv: list[str]) -> tuple[list[str], list[str]]:
  """(launcher options, program) where program is [SCRIPT, *ARGS] or ["-m", MODULE, *ARGS]."""
  i = 0
  while i < len(argv):
    arg = argv[i]
    if arg == "--":
      return argv[:i], argv[i + 1:]
    if arg == "-m":
      return argv[:i], argv[i:]
    if arg in _VALUE_OPTIONS:
      i += 2
    elif arg.startswith("-") and arg != "-":
      i += 1
    else:
      return argv[:i], argv[i:]
  return argv, []


def _parser() -> argparse.ArgumentParser:
  p = argparse.ArgumentParser(
      prog="python -m xjax.tools.launch",
      description="Run SCRIPT (or -m MODULE) as N local processes joined by jax.distributed.",
      usage="%(prog)s -n N [options] (SCRIPT | -m MODULE) [ARGS...]")
  p.add_argument("-n", "--num-processes", type=int, required=True, help="number of processes")
  p.add_argument("--devices-per-process", type=int, default=None,
                 help="CPU devices per process (--xla_force_host_platform_device_count)")
  p.add_argument("--port", type=int, default=None, help="coordinator port (default: a free one)")
  p.add_argument("--timeout", type=float, default=None,
                 help="stop all processes after this many seconds and exit with 124")
  p.add_argument("--grace", type=float, default=5.0,
                 help="seconds between SIGTERM and SIGKILL when stopping processes (default 5)")
  return p


def _forward(stream, out, prefix: bytes, lock: threading.Lock):
  """Copies `stream` line by line to the binary file `out`, each line prefixed."""
  for line in iter(stream.readline, b""):
    if not line.endswith(b"\n"):
      line += b"\n"
    with lock:
      out.write(prefix + line)
      out.flush()
  stream.close()


def _stop(procs: list[subprocess.Popen], grace: float):
  """SIGTERM to every running process (by PID), SIGKILL to those still running after `grace` s."""
  running = [p for p in procs if p.poll() is None]
  for p in running:
    try:
      p.terminate()
    except ProcessLookupError:
      pass
  deadline = time.monotonic() + grace
  for p in running:
    try:
      p.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
      p.kill()
  for p in running:
    p.wait()


def _exit_code(returncode: int) -> int:
  """A child's return code as a shell exit status (killed by signal s -> 128 + s)."""
  return 128 - returncode if returncode < 0 else returncode


def _log(msg: str):
  print(f"launch: {msg}", file=sys.stderr, flush=True)


def _wait(procs: list[subprocess.Popen], timeout: float | None, grace: float) -> int:
  deadline = None if timeout is None else time.monotonic() + timeout
  while True:
    codes = [p.poll() for p in procs]
    failed = next((i for i, c in enumerate(codes) if c not in (None, 0)), None)
    if failed is not None:
      code = _exit_code(codes[failed])
      if any(c is None for c in codes):
        _log(f"process {failed} exited with code {code}; stopping the others")
      _stop(procs, grace)
      return code
    if all(c == 0 for c in codes):
      return 0
    if deadline is not None and time.monotonic() >= deadline:
      _log(f"timed out after {timeout:g} s; stopping all processes")
      _stop(procs, grace)
      return 124
    time.sleep(_POLL_S)


def main(argv: list[str] | None = None) -> int:
  """Runs the launcher with command-line arguments `argv` (default ``sys.argv[1:]``).

  Returns:
    0 if every process exited with 0; else the first failing process's exit
    code, 124 on --timeout, 130 on Ctrl-C, 143 on SIGTERM.
  """
  argv = sys.argv[1:] if argv is None else list(argv)
  options, program = _split_argv(argv)
  parser = _parser()
  args = parser.parse_args(options)
  if not program or program == ["-m"]:
    parser.error("missing SCRIPT or -m MODULE")
  if args.num_processes < 1:
    parser.error("-n must be at least 1")
  if args.devices_per_process is not None and args.devices_per_process < 1:
    parser.error("--devices-per-process must be at least 1")

  port = args.port if args.port is not None else free_port()
  address = f"127.0.0.1:{port}"
  command = [sys.executable, *program]
  out_lock = threading.Lock()
  procs: list[subprocess.Popen] = []
  threads: list[threading.Thread] = []
  sys.stdout.flush()
  sys.stderr.flush()
  previous_sigterm = None
  if threading.current_thread() is threading.main_thread():
    def on_sigterm(signum, frame):
      raise _Terminated()
    previous_sigterm = signal.signal(signal.SIGTERM, on_sigterm)
  try:
    for i in range(args.num_processes):
      env = child_environment(os.environ, coordinator_address=address,
                              num_processes=args.num_processes, process_id=i,
                              devices_per_process=args.devices_per_process)
      p = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
      procs.append(p)
      prefix = f"[{i}] ".encode()
      for stream, out in ((p.stdout, sys.stdout.buffer), (p.stderr, sys.stderr.buffer)):
        t = threading.Thread(target=_forward, args=(stream, out, prefix, out_lock), daemon=True)
        t.start()
        threads.append(t)
    code = _wait(procs, args.timeout, args.grace)
  except KeyboardInterrupt:
    _log("interrupted; stopping all processes")
    code = 130
  except _Terminated:
    _log("terminated; stopping all processes")
    code = 143
  finally:
    _stop(procs, args.grace)
    if previous_sigterm is not None:
      signal.signal(signal.SIGTERM, previous_sigterm)
  # A grandchild holding a pipe open must not keep the launcher alive.
  for t in threads:
    t.join(timeout=2.0)
  return code


if __name__ == "__main__":
  sys.exit(main())
