# edgeopt developer entry points. `make demo` and `make test` work on a fresh machine.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
DEMO_DIR := out/demo

.PHONY: install demo test test-slow test-all lint bench-overhead clean

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[dev]"
	@touch $(STAMP)

install: $(STAMP)

# The main job on the embedded default: build the demo CNN, inspect it, benchmark it on the local CPU.
demo: $(STAMP)
	$(VENV)/bin/edgeopt zoo build mobilenet-small $(DEMO_DIR)/mobilenet-small.onnx
	$(VENV)/bin/edgeopt inspect $(DEMO_DIR)/mobilenet-small.onnx --target local
	$(VENV)/bin/edgeopt bench $(DEMO_DIR)/mobilenet-small.onnx --target local --fps 30

# Fast suite (CI): everything but the groups marked slow.
test: $(STAMP)
	$(PY) -m pytest -m "not slow" -q

test-slow: $(STAMP)
	$(PY) -m pytest -m slow -q

test-all: $(STAMP)
	$(PY) -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check edgeopt device_agent tests benchmarks
	$(VENV)/bin/mypy

bench-overhead: $(STAMP)
	$(PY) benchmarks/harness_overhead.py

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache .mypy_cache
