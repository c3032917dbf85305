"""Runs bench/workloads.py under xjax and real JAX in separate processes, interleaved.

    python bench/run.py [--rounds N] [--groups core,overhead,linalg,nn,sharding,rss] [--xjax-python PATH] [--jax-python PATH]

Each library runs in its own virtualenv (xjax's must not contain `jax`, see
DESIGN.md). Prints a table of medians over rounds and the xjax/JAX ratio.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def _run(python, lib, groups):
  """One round for `lib`: each group of workloads in a fresh process."""
  env = dict(os.environ, JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="1")
  results = {}
  for group in groups:
    out = subprocess.run([python, os.path.join(HERE, "workloads.py"), lib, group], env=env,
                         capture_output=True, text=True, cwd=REPO)
    if out.returncode:
      sys.exit(f"{lib} workloads failed ({python}):\n{out.stderr}")
    results.update(json.loads(out.stdout.strip().splitlines()[-1]))
  return results


def _fmt(seconds, name=""):
  if name.endswith("(peak RSS)"):
    return f"{seconds / 2**20:.0f} MiB"
  if seconds >= 1:
    return f"{seconds:.2f} s"
  if seconds >= 1e-3:
    return f"{seconds * 1e3:.2f} ms"
  return f"{seconds * 1e6:.1f} µs"


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--rounds", type=int, default=3)
  ap.add_argument("--groups", default="core,overhead,linalg,nn,sharding,rss",
                  help="comma-separated workload groups (core, overhead, linalg, nn, sharding, "
                       "rss)")
  ap.add_argument("--xjax-python", default=os.path.join(REPO, ".venv", "bin", "python"))
  ap.add_argument("--jax-python", default=os.path.join(REPO, ".venv-jax", "bin", "python"))
  args = ap.parse_args()
  results = {"xjax": [], "jax": []}
  for _ in range(args.rounds):
    groups = args.groups.split(",")
    results["xjax"].append(_run(args.xjax_python, "xjax", groups))
    results["jax"].append(_run(args.jax_python, "jax", groups))
  names = list(results["xjax"][0])
  print(f"| workload | xjax | JAX | xjax/JAX |\n|---|---|---|---|")
  for name in names:
    ours = statistics.median(r[name] for r in results["xjax"])
    theirs = statistics.median(r[name] for r in results["jax"])
    print(f"| {name} | {_fmt(ours, name)} | {_fmt(theirs, name)} | {ours / theirs:.2f} |")


if __name__ == "__main__":
  sys.exit(main())
