"""The examples in the jnp docstrings run and print what they show."""
import doctest

import pytest

from xjax._src.numpy import (creation, einsum, index_tricks, indexing, lax_numpy, manipulation,
                             pad, polynomial, selection, setops, tensor_contractions, vectorize)


@pytest.mark.parametrize("module", [creation, einsum, index_tricks, indexing, lax_numpy,
                                    manipulation, pad, polynomial, selection, setops,
                                    tensor_contractions, vectorize],
                         ids=lambda m: m.__name__)
def test_docstring_examples_run(module):
  result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
  assert result.attempted > 0 and result.failed == 0
