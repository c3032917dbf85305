"""Mutable array references (`Ref`): their types (`types.py`) and the state primitives with
their rules (`primitives.py`). The discharge interpreter is `interpreters/discharge.py`."""
