"""MLIR utilities of `jax.extend.mlir`. xjax emits StableHLO as text and exposes none of
the MLIR Python bindings (`jax.extend.mlir.ir`, dialects, passes): importing this
package succeeds so that libraries can probe for them."""
