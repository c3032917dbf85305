"""A pytest plugin for tools/jax_tests.py's xjax runs: makes `import jax` resolve to xjax
(`install_as_jax`) in every pytest process, pytest-xdist's workers included (the main process
is already started by `python -m xjax`; installing again there does nothing)."""
from xjax._src.jax_compat import install_as_jax

install_as_jax()
