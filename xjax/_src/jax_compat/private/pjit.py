"""`jax._src.pjit` under `xjax.install_as_jax()`: `pjit`, which JAX 0.10.2 keeps as `jit` with
its sharding arguments. The C++ jit cache objects (`make_jit_cpp_cache`) and the lowering cache
(`_pjit_lower`) of JAX's implementation have no counterpart in xjax: they raise."""
from xjax._src.jit import jit as _jit


def pjit(fun, in_shardings=None, out_shardings=None, static_argnums=None,
         static_argnames=None, donate_argnums=None, donate_argnames=None, keep_unused=False,
         device=None, backend=None, inline=False, abstracted_axes=None, compiler_options=None):
  """`jit` with explicit input/output shardings (mirrors `jax._src.pjit.pjit`)."""
  kw = dict(static_argnums=static_argnums, static_argnames=static_argnames,
            donate_argnums=donate_argnums, donate_argnames=donate_argnames,
            keep_unused=keep_unused, device=device, backend=backend, inline=inline,
            compiler_options=compiler_options)
  if in_shardings is not None:
    kw["in_shardings"] = in_shardings
  if out_shardings is not None:
    kw["out_shardings"] = out_shardings
  return _jit(fun, **{k: v for k, v in kw.items() if v is not None})


def _not_in_xjax(name):
  def missing(*args, **kwargs):
    raise NotImplementedError(f"{name} is an internal of JAX's jit implementation that xjax "
                              "does not have")
  missing.__name__ = name
  return missing


make_jit_cpp_cache = _not_in_xjax("make_jit_cpp_cache")
_pjit_lower = _not_in_xjax("_pjit_lower")
