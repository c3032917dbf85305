# `make demo` runs the main example; `make test` runs the whole test suite.
# Each creates the virtualenv .venv (xjax with its test extra; no `jax` in it).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

.PHONY: demo test goldens bench
demo: $(VENV)/.installed
	$(PY) examples/mlp_digits.py

test: $(VENV)/.installed
	$(PY) -m pytest -q -n auto tests
	XLA_FLAGS=--xla_force_host_platform_device_count=8 $(PY) -m pytest -q -n auto tests/multidevice

# Regenerates tests/golden/* with real JAX, in a virtualenv of its own.
goldens:
	$(PYTHON) -m venv .venv-jax
	.venv-jax/bin/python -m pip install -q 'jax==0.10.2' 'jaxlib==0.10.2' numpy ml_dtypes
	.venv-jax/bin/python tools/make_goldens.py
	.venv-jax/bin/python tools/golden_dtypes.py
	.venv-jax/bin/python tools/golden_pytrees.py
	.venv-jax/bin/python tools/golden_random.py

# The benchmark against real JAX (see README.md, "Benchmark against JAX"): xjax runs from .venv,
# JAX from .venv-jax, built from the `bench` extra (jax==0.10.2 beside the same jaxlib).
.venv-jax/.installed: pyproject.toml
	$(PYTHON) -m venv .venv-jax
	.venv-jax/bin/python -m pip install -q --upgrade pip
	.venv-jax/bin/python -m pip install -q '.[bench]'
	touch $@

bench: $(VENV)/.installed .venv-jax/.installed
	$(PY) bench/run.py --xjax-python $(PY) --jax-python .venv-jax/bin/python
