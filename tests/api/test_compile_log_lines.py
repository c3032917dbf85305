"""JAX's timing log lines around a jit compilation (WARNING with jax_log_compiles)."""
import logging

import xjax
import xjax.numpy as jnp
from xjax._src import config as config_lib


def test_tracing_lowering_and_compiling_are_logged(caplog):
  f = xjax.jit(lambda x: x * 3)
  with config_lib.log_compiles(True), caplog.at_level(logging.WARNING):
    f(jnp.arange(5))
  text = caplog.text
  assert "Finished tracing <lambda> for jit in" in text
  assert "Compiling jit(<lambda>)" in text
  # Lowering and compiling log only when the program is built, not found cached.
  xjax.clear_caches()
  caplog.clear()
  with config_lib.log_compiles(True), caplog.at_level(logging.WARNING):
    f(jnp.arange(5))
  assert "Finished tracing <lambda> for jit" in caplog.text
  assert "Finished XLA compilation of jit(<lambda>) in" in caplog.text
  assert "Finished jaxpr to MLIR module conversion jit(<lambda>) in" in caplog.text
