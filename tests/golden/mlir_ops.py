"""Reading cross-device operations out of StableHLO text.

Shared by tools/golden_parallel.py (on JAX's text) and the collectives' lowering
tests (on xjax's): the operation names and attributes are compared, not the text.
"""
import re

_COLLECTIVE = re.compile(r'"?stablehlo\.(all_reduce|all_gather|reduce_scatter|all_to_all|'
                         r'collective_permute|partition_id)"?')


def split_attrs(text: str) -> dict:
  """'a = 1 : i64, b, c = dense<[[0, 1]]> : tensor<1x2xi64>' as a dict (unit attributes: None)."""
  attrs, depth, item = {}, 0, ""
  for ch in text + ",":
    if ch == "," and depth == 0:
      key, _, value = item.strip().partition(" = ")
      attrs[key] = value or None
      item = ""
      continue
    depth += ch in "<[({"
    depth -= ch in ">])}"
    item += ch
  return attrs


def collective_ops(module_text: str) -> list:
  """[op name, attributes] of each cross-device operation, in order."""
  ops = []
  for line in module_text.splitlines():
    m = _COLLECTIVE.search(line)
    if not m:
      continue
    body = re.search(r"<\{(.*)\}>", line)
    ops.append([m.group(1), split_attrs(body.group(1)) if body else {}])
  return ops
