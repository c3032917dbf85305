"""A short demo of xjax.jit on real numbers: fit a line to measured data.

The data are the classic Old Faithful geyser observations (eruption length
in minutes, waiting time to the next eruption in minutes), the first 30 rows
of the data set shipped with R. Least squares by the normal equations, jitted.
"""
import numpy as np

import xjax as jax
import xjax.numpy as jnp

ERUPTIONS = [3.600, 1.800, 3.333, 2.283, 4.533, 2.883, 4.700, 3.600, 1.950, 4.350,
             1.833, 3.917, 4.200, 1.750, 4.700, 2.167, 1.750, 4.800, 1.600, 4.250,
             1.800, 1.750, 3.450, 3.067, 4.533, 3.600, 1.967, 4.083, 3.850, 4.433]
WAITING = [79, 54, 74, 62, 85, 55, 88, 85, 51, 85, 54, 84, 78, 47, 83, 52, 62, 84, 52, 79,
           51, 47, 78, 69, 74, 83, 55, 76, 78, 79]


@jax.jit
def fit_line(x, y):
  """Slope and intercept of the least-squares line through (x, y)."""
  n = x.shape[0]
  sx, sy = jnp.dot(x, jnp.ones(n)), jnp.dot(y, jnp.ones(n))
  sxx, sxy = jnp.dot(x, x), jnp.dot(x, y)
  slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
  intercept = (sy - slope * sx) / n
  return slope, intercept


def main():
  x = jnp.array(ERUPTIONS)
  y = jnp.array(WAITING, dtype=jnp.float32)
  slope, intercept = fit_line(x, y)
  print(jax.make_jaxpr(fit_line.__wrapped__)(x, y))
  print(f"waiting ≈ {float(slope):.2f} × eruption + {float(intercept):.2f} minutes")
  reference = np.polyfit(np.array(ERUPTIONS), np.array(WAITING, float), 1)
  print(f"numpy.polyfit gives slope {reference[0]:.2f}, intercept {reference[1]:.2f}")


if __name__ == "__main__":
  main()
