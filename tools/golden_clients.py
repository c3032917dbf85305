"""Records tests/golden/clients/NAME.json: what each tests/clients/scripts/NAME.py prints
(its last line, a JSON object) under real JAX 0.10.2 with the client libraries.

Usage: python tools/golden_clients.py --python PYTHON [NAME ...]
PYTHON must have jax==0.10.2 and the clients of tests/clients/requirements.txt (e.g. a
virtualenv made with `pip install jax==0.10.2`, `-r tests/clients/requirements-deps.txt`
and `pip install --no-deps -r tests/clients/requirements.txt`). Without names: every script.
"""
import argparse
import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "tests", "clients", "scripts")
GOLDENS = os.path.join(ROOT, "tests", "golden", "clients")


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--python", required=True, help="a Python with real jax and the clients")
  parser.add_argument("names", nargs="*")
  args = parser.parse_args()
  names = args.names or sorted(f[:-3] for f in os.listdir(SCRIPTS) if f.endswith(".py"))
  os.makedirs(GOLDENS, exist_ok=True)
  for name in names:
    proc = subprocess.run([args.python, os.path.join(SCRIPTS, name + ".py")], capture_output=True,
                          text=True, cwd=ROOT, env=dict(os.environ, JAX_PLATFORMS="cpu"))
    if proc.returncode != 0:
      raise SystemExit(f"{name}.py failed under JAX:\n{proc.stderr[-4000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    with open(os.path.join(GOLDENS, name + ".json"), "w") as f:
      json.dump(result, f, indent=1, sort_keys=True)
      f.write("\n")
    print(f"recorded {name}")


if __name__ == "__main__":
  main()
