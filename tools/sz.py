"""Prints line counts of xjax's modules against STYLE.md's size budget (informational)."""
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "xjax", "_src")
BUDGETS = {
    "core.py": 1500, "interpreters/ad.py": 900, "interpreters/batching.py": 900,
    "interpreters/partial_eval.py": 900, "tree_util.py": 500, "dtypes.py": 600,
    "pretty_printer.py": 250,
}
GROUPS = {
    "lowering.py + stablehlo.py": (("interpreters/lowering.py", "stablehlo.py"), 1200),
    "dispatch + jit + api + api_util": (("dispatch.py", "jit.py", "api.py", "api_util.py"), 1800),
}


def count(path):
  with open(path) as f:
    return sum(1 for line in f if line.strip() and not line.strip().startswith("#"))


def main():
  sizes = {}
  for dirpath, _, files in os.walk(ROOT):
    for name in files:
      if name.endswith(".py"):
        full = os.path.join(dirpath, name)
        sizes[os.path.relpath(full, ROOT)] = count(full)
  print(f"{'module':45s} {'lines':>6s} {'budget':>7s}")
  for name in sorted(sizes):
    budget = BUDGETS.get(name)
    flag = " over" if budget and sizes[name] > budget else ""
    print(f"{name:45s} {sizes[name]:6d} {budget or '':>7}{flag}")
  for label, (members, budget) in GROUPS.items():
    total = sum(sizes.get(m, 0) for m in members)
    print(f"{label:45s} {total:6d} {budget:7d}{' over' if total > budget else ''}")
  print(f"{'total':45s} {sum(sizes.values()):6d}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
