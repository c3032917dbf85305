"""Mutable array references (`Ref`): types, primitives and state discharge.

Kept import-free: `dispatch` and `jit` import `state.types` and
`state.discharge` lazily, and `xjax.ref` imports the whole.
"""
