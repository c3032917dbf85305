"""jit's generated fastest path: the docstring of `_fast_call` shows the exact code."""
import inspect
import textwrap

import numpy as np

import xjax as jax
import xjax.numpy as jnp
from xjax._src import jit_fast_path
from xjax._src import tree_util


def test_the_docstring_shows_the_code_generated_for_its_example():
  doc = inspect.getdoc(jit_fast_path._fast_call)
  shown = textwrap.dedent(doc[doc.index("    def make("):]) + "\n"
  x, y, z = jnp.ones(3), jnp.ones(3), jnp.ones(3)
  args_node = tree_util.flatten_call_args((x, (y, z)), {}, [])[2][0]
  source, keys, n_leaves = jit_fast_path._fast_call_source(args_node, True)
  assert (shown, keys, n_leaves) == (source, (), 3)


def test_the_example_runs_on_the_generated_code():
  f = jax.jit(lambda x, yz: x * yz[0] + yz[1])
  x, y, z = jnp.ones(3), jnp.full(3, 2.0), jnp.full(3, 3.0)
  f(x, (y, z))
  assert f._cache.fast_call.__qualname__ == "make.<locals>.fast_call"
  np.testing.assert_array_equal(f(x, (y, z)), [5.0, 5.0, 5.0])
  assert f.cache_info().hits == 1
