"""The FAQ's impure function reading a module global, run with jit."""
from xjax import jit

y = 0


@jit
def impure_func(x):
  print("Inside:", y)
  return x + y


def run_impure_loop():
  global y
  results = []
  for y in range(3):  # noqa: B007 - the FAQ rebinds the global on purpose
    results.append(int(impure_func(y)))
  return results
