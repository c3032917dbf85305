# `make demo` runs the main example; `make test` runs the whole test suite; `make test-fast`
# runs it without the tests marked `slow` (fresh interpreters, multi-process jobs, client
# libraries' suites): a few minutes on 2 cores.
# Each creates the virtualenv .venv (xjax with its test extra; no `jax` in it). `make test`
# also installs the JAX client libraries of tests/clients (optax, chex, flax, equinox,
# numpyro) with --no-deps, so that real `jax` never enters .venv, and unpacks their source
# distributions (their own test files) into .clients/.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

CLIENT_REQS := tests/clients/requirements.txt tests/clients/requirements-deps.txt
$(VENV)/.clients: $(VENV)/.installed $(CLIENT_REQS)
	$(PY) -m pip install -q -r tests/clients/requirements-deps.txt
	$(PY) -m pip install -q --no-deps -r tests/clients/requirements.txt
	rm -rf .clients && mkdir -p .clients
	$(PY) -m pip download -q --no-deps --no-binary :all: -d .clients -r tests/clients/requirements.txt
	cd .clients && for f in *.tar.gz; do tar xzf "$$f" && rm "$$f"; done
	touch $@

.PHONY: demo test test-fast slow-list goldens bench conformance conformance-sample
demo: $(VENV)/.installed
	$(PY) examples/mlp_digits.py

test: $(VENV)/.installed $(VENV)/.clients
	$(PY) -m pytest -q -n auto tests
	XLA_FLAGS=--xla_force_host_platform_device_count=8 $(PY) -m pytest -q -n auto tests/multidevice
	$(MAKE) conformance-sample

# JAX 0.10.2's own tests (../shared/jax-tests/tests) on xjax: `conformance-sample` (part of
# `make test`, a few minutes) runs a few small files and fails when a test recorded in
# tests/conformance/expected_passing.txt (passing on JAX and on xjax) no longer passes; a clone
# without ../shared/jax-tests says so and skips it. `conformance` runs every file of issue 35
# on JAX (.venv-jax) and on xjax and rewrites docs/conformance.md.
JAX_TESTS := ../shared/jax-tests/tests
conformance-sample: $(VENV)/.installed
	@if [ -d $(JAX_TESTS) ]; then \
	  $(PY) tools/jax_tests.py --sample --jobs 2 --expect tests/conformance/expected_passing.txt; \
	else echo "conformance-sample: $(JAX_TESTS) is absent; skipping JAX's own tests"; fi

conformance: $(VENV)/.installed .venv-jax/.installed
	$(PY) tools/jax_tests.py --backend both --markdown docs/conformance.md

# Everything but the `slow` tests (and, as always, `nightly`): -m on the command line replaces
# the -m 'not nightly' of pyproject.toml's addopts, so it names both. `slow` marks the tests
# that start fresh Python processes (in their files) and those listed in tests/slow_tests.txt
# (over 0.1 s of CPU each); `make slow-list` runs the fast tier, measuring each test's CPU
# time (with the processes it starts), and adds those over 0.1 s to the list.
FAST := -m 'not nightly and not slow'
test-fast: $(VENV)/.installed
	$(PY) -m pytest -q -n auto $(FAST) tests
	XLA_FLAGS=--xla_force_host_platform_device_count=8 $(PY) -m pytest -q -n auto $(FAST) tests/multidevice

slow-list: $(VENV)/.installed
	$(PY) -m pytest -q -n auto --record-slow $(FAST) tests
	XLA_FLAGS=--xla_force_host_platform_device_count=8 $(PY) -m pytest -q -n auto --record-slow $(FAST) tests/multidevice

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
