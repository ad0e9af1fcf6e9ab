# edgeopt developer entry points. `make demo` and `make test` work on a fresh machine.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
DEMO_DIR := out/demo

.PHONY: zoo-llm test-faults test-fuzz test-netns install sysdeps demo test test-slow test-arm64 test-all lint bench-overhead bench-soak clean

TEST_STAMP := $(VENV)/.installed-test-stamp
# Extras the test suite exercises: every runtime and pass that installs from the registries here.
# ray: ~80 MB wheel, ~250 MB installed, ~10 s to install here; its tests skip with the reason when absent.
# llm: onnxruntime-genai, openvino-genai, transformers, tokenizers (~150 MB installed); docs/llm.md.
TEST_EXTRAS := dev,openvino,nncf,litert,torch,images,coreml,ray,llm

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	@touch $(STAMP)

$(TEST_STAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install -q -e ".[$(TEST_EXTRAS)]"
	@touch $(TEST_STAMP)

install: $(STAMP)

# The main job on the embedded default: build the demo CNN, inspect it, benchmark it on the local CPU.
demo: $(STAMP)
	$(VENV)/bin/edgeopt zoo build mobilenet-small $(DEMO_DIR)/mobilenet-small.onnx
	$(VENV)/bin/edgeopt inspect $(DEMO_DIR)/mobilenet-small.onnx --target local
	$(VENV)/bin/edgeopt bench $(DEMO_DIR)/mobilenet-small.onnx --target local --fps 30

# The trained zoo LLM (docs/llm.md): ~3 min of training on 2 cores the first time, then from the cache
# ($$EDGEOPT_ZOO_CACHE, else ~/.cache/edgeopt/zoo).
zoo-llm: $(TEST_STAMP)
	$(VENV)/bin/edgeopt zoo build tiny-llama-trained out/zoo/tiny-llama-trained

# System tools the tests use: a real sshd on loopback and nftables (SSH tests), headless chromium (HTML reports).
# Installs them only when run as root and missing; otherwise prints a note (those tests then skip).
sysdeps:
	@if [ -x /usr/sbin/sshd ] && command -v nft >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing openssh-server and nftables for the SSH tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server nftables >/dev/null \
			|| echo "note: could not install openssh-server/nftables; the SSH tests will skip"; \
	else echo "note: openssh-server/nftables missing and not root (or no apt-get): the SSH tests will skip"; fi
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing chromium for the HTML report tests (headless)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
			|| echo "note: could not install chromium; the HTML report tests will skip"; \
	else echo "note: chromium missing and not root (or no apt-get): the HTML report tests will skip"; fi

# Fast suite (CI): everything but the groups below (slow, faults, netns; arm64 is slow too). ~1,080 tests on
# TEST_WORKERS pytest-xdist workers, each with its own sshd ports and temp dirs; tests that share a module fixture
# or a session result stay on one worker (tests/xdist_groups.py). Times: README, Tests.
TEST_WORKERS ?= 2
test: sysdeps $(TEST_STAMP)
	$(PY) -m pytest -m "not slow and not faults and not netns" -n $(TEST_WORKERS) --dist loadgroup -q --durations=15

# The fault campaign (tests/faults, docs/reliability.md): ~10 min on 2 cores (the link faults ~6 of them); root
# parts skip with a reason.
test-faults: sysdeps $(TEST_STAMP)
	$(PY) -m pytest -m faults -q -rs tests/faults

# Only the hostile-input campaign (tests/faults/test_fuzz_*.py, part of test-faults): counts in out/fuzz-counts.json.
test-fuzz: $(TEST_STAMP)
	$(PY) -m pytest -m fuzz -q -s tests/faults

# Network-namespace devices (root, ip netns, nftables): packet loss, a dead link, Wi-Fi-like devices behind a
# latency proxy, and the link faults of tests/faults/test_link_faults.py (faults too). Fixed addresses: serial.
# 12 tests, ~3.5 min (mostly waiting for link deadlines).
test-netns: sysdeps $(TEST_STAMP)
	$(PY) -m pytest -m netns -q -rs

# Real packaged models from PyPI wheels, the TFLite converter tool environment, the arm64 board, the two-node Ray
# cluster, the soak smoke: serial (several measure latency against each other). Not timed as a whole: its parts
# add up to roughly 20 min with warm caches (README, Tests).
test-slow: sysdeps $(TEST_STAMP)
	$(PY) -m pytest -m slow -q

# The emulated arm64 board (qemu-user + a Debian 12 rootfs cached in /var/cache/edgeopt-test; docs/devices.md).
# ~8 min on 2 cores with the rootfs cached, ~23 min cold (docs/devices.md). Skips when not root / no binfmt_misc /
# offline.
test-arm64: sysdeps $(TEST_STAMP)
	@if command -v debootstrap >/dev/null 2>&1 && [ -x /usr/bin/qemu-aarch64-static ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing qemu-user-static, debootstrap and binfmt-support for the arm64 board"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user-static debootstrap \
			binfmt-support >/dev/null || echo "note: could not install them; the arm64 tests will skip"; \
	else echo "note: qemu-user-static/debootstrap missing and not root: the arm64 tests will skip"; fi
	$(PY) -m pytest -m arm64 -q -rs tests/integration/arm64

test-all: sysdeps $(TEST_STAMP)
	$(PY) -m pytest -q

lint: $(TEST_STAMP)
	$(VENV)/bin/ruff check edgeopt device_agent tests benchmarks
	$(VENV)/bin/mypy

bench-overhead: $(STAMP)
	$(PY) benchmarks/harness_overhead.py

# 1000 local + 300 SSH benches in one process, sampled for leaks (docs/reliability.md, Soak): ~30-60 min on 2 cores.
bench-soak: sysdeps $(STAMP)
	$(PY) benchmarks/soak.py

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache .mypy_cache
