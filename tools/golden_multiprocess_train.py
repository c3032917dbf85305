"""Records what *real* JAX prints for examples/multiprocess_train.py (2 processes of 2 CPU
devices) and for examples/data_parallel.py on 4 devices, into
tests/golden/multiprocess_train.json, for tests/examples/test_multiprocess_train.py.

Run with the reference virtualenv (never with xjax), from anywhere:

    .venv-jax/bin/python tools/golden_multiprocess_train.py

The launcher runs as a file (xjax/tools/launch.py imports nothing from xjax), with this
interpreter, so its processes run real JAX. JAX 0.10.2 draws random numbers with
`jax_threefry_partitionable=True`; xjax must run with the same setting to reproduce them.
"""
import json
import os
import pathlib
import subprocess
import sys

import jax

REPO = pathlib.Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "golden" / "multiprocess_train.json"
LAUNCH = REPO / "xjax" / "tools" / "launch.py"
# Shared with the test: short runs of a small model.
ARGS = ["--epochs", "2", "--hidden", "32", "32", "--batch-size", "64", "--backend", "jax"]
TIMEOUT_S = 300


def run(command, env):
  """Runs `command` in its own session; returns its stdout, or exits with its output."""
  proc = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, start_new_session=True)
  try:
    out, err = proc.communicate(timeout=TIMEOUT_S)
  except subprocess.TimeoutExpired:
    os.killpg(proc.pid, 9)
    proc.communicate()
    sys.exit(f"timed out after {TIMEOUT_S} s: {command}")
  if proc.returncode:
    sys.exit(f"{command} exited with {proc.returncode}:\n{out}\n{err}")
  return out


def parse(stdout, prefix=""):
  """The per-epoch losses and the final test accuracy printed (by process 0)."""
  lines = [line[len(prefix):] for line in stdout.splitlines() if line.startswith(prefix)]
  losses, = (line.split()[2:] for line in lines if line.startswith("per-epoch losses"))
  final, = (line for line in lines if line.startswith("final test accuracy"))
  return [float(v) for v in losses], float(final.split()[3])


def main():
  env = {k: v for k, v in os.environ.items()
         if not k.startswith("JAX_") and k != "XLA_FLAGS"}
  env["JAX_PLATFORMS"] = "cpu"
  launched = run([sys.executable, str(LAUNCH), "-n", "2", "--devices-per-process", "2",
                  "--timeout", str(TIMEOUT_S - 30), "examples/multiprocess_train.py", *ARGS],
                 env)
  losses, accuracy = parse(launched, "[0] ")
  one_process = run([sys.executable, "examples/data_parallel.py", *ARGS],
                    dict(env, XLA_FLAGS="--xla_force_host_platform_device_count=4"))
  dp_losses, dp_accuracy = parse(one_process)
  record = {
      "jax_version": jax.__version__,
      "jax_threefry_partitionable": bool(jax.config.jax_threefry_partitionable),
      "args": ARGS[:-2],
      "multiprocess_train": {"processes": 2, "devices_per_process": 2, "losses": losses,
                             "test_accuracy": accuracy},
      "data_parallel_4_devices": {"losses": dp_losses, "test_accuracy": dp_accuracy},
  }
  OUT.write_text(json.dumps(record, indent=2) + "\n")
  print(f"wrote {OUT}")


if __name__ == "__main__":
  main()
