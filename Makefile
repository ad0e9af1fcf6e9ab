# edgeopt developer entry points. `make demo` and `make test` work on a fresh machine.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
DEMO_DIR := out/demo

.PHONY: zoo-llm test-heavy test-faults test-fuzz test-netns install sysdeps demo test test-slow test-arm64 test-all lint clean \
	bench-overhead bench-energy bench-profile bench-ssh-overhead bench-ssh-sweep bench-fleet bench-soak bench-formats \
	bench-recipes bench-int8-defaults bench-sweep bench-ship-goals bench-llm-goals bench-llm-awq bench-llm-05b \
	bench-hostile bench-llamacpp-goals

TEST_STAMP := $(VENV)/.installed-test-stamp
# Extras the test suite exercises: every runtime and pass that installs from the registries here.
# ray: ~80 MB wheel, ~250 MB installed, ~10 s to install here; its tests skip with the reason when absent.
# llm: onnxruntime-genai, openvino-genai, transformers, tokenizers (~150 MB installed); docs/llm.md.
# llamacpp: llama-cpp-python, an sdist only (docs/llm.md, "llama.cpp"): its wheel is built once (~15 min on 2 cores)
# into LLAMACPP_WHEELS, keyed by version, build flags and architecture (pip's own cache keys on the sdist alone), and
# installed from there. GGML_NATIVE=OFF: no -march=native, so the wheel runs on any CPU of the arch (AVX2 on x86).
comma := ,
TEST_EXTRAS := dev,openvino,nncf,litert,torch,images,coreml,ray,llm,llamacpp
LLAMACPP_VERSION := 0.3.36
LLAMACPP_CMAKE_ARGS := -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF
LLAMACPP_WHEELS ?= $(HOME)/.cache/edgeopt/wheels/llama-cpp-python-$(LLAMACPP_VERSION)-$(shell uname -m)-nonnative

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	@touch $(STAMP)

# A machine that cannot compile it (no C++ compiler or cmake) still runs the suite: the llama.cpp tests then skip
# with the reason (llama-cpp-python not installed), and the note says why.
$(TEST_STAMP): $(STAMP) pyproject.toml
	@ls $(LLAMACPP_WHEELS)/llama_cpp_python-$(LLAMACPP_VERSION)-*.whl >/dev/null 2>&1 || \
		{ echo "building llama-cpp-python $(LLAMACPP_VERSION) once (15-36 min on 2 cores; README, Tests)"; \
		CMAKE_ARGS="$(LLAMACPP_CMAKE_ARGS)" $(PY) -m pip wheel -q --no-deps --no-binary llama-cpp-python \
		-w $(LLAMACPP_WHEELS) llama-cpp-python==$(LLAMACPP_VERSION) || \
		echo "note: could not build llama-cpp-python (needs a C++ compiler and cmake); the llama.cpp tests will skip"; }
	@if ls $(LLAMACPP_WHEELS)/llama_cpp_python-$(LLAMACPP_VERSION)-*.whl >/dev/null 2>&1; then \
		$(PY) -m pip install -q --find-links $(LLAMACPP_WHEELS) -e ".[$(TEST_EXTRAS)]"; \
	else $(PY) -m pip install -q -e ".[$(subst $(comma)llamacpp,,$(TEST_EXTRAS))]"; fi
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

# Fast suite (CI, then test-heavy): everything but the groups below (heavy, slow, faults, netns; arm64 is slow too).
# ~1,900 tests on TEST_WORKERS pytest-xdist workers, each with its own sshd ports and temp dirs; tests that share a
# module fixture or a session result stay on one worker (tests/xdist_groups.py). Times: README, Tests.
# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE, set in some containers):
# without it each worker compiles edgeopt and rewrites every test file's asserts again (~10 s of each worker's
# collection), and so does every edgeopt subprocess. tests/faults is all `faults` (its conftest marks it): not even
# imported here.
# Three workers on the 2-core CI machine: with two, ~15 % of the cores sat idle while workers waited on agent and
# sshd start-ups (9 min 50 s of pytest with 2, 85 % of both cores busy; the third worker fills the gaps). Every
# fast test passes under that oversubscription (no verdict here depends on a quiet machine).
TEST_WORKERS ?= 3
test: sysdeps $(TEST_STAMP)
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -m "not slow and not faults and not netns and not heavy" \
		--ignore=tests/faults -n $(TEST_WORKERS) --dist loadgroup -q --durations=15

# The end-to-end proofs that export LLMs (torch/transformers, onnxruntime-genai's builder, llama.cpp's converter and
# quantizer) or pip-install onto a device (marker `heavy`): 23 tests, about a fifth of the whole suite's CPU time.
# CI runs them right after `make test` (.ci/run); the LLM levels they share with `make test` come from the suite's
# cache (out/test-cache).
test-heavy: sysdeps $(TEST_STAMP)
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -m "heavy and not slow and not faults and not netns" \
		--ignore=tests/faults -n $(TEST_WORKERS) --dist loadgroup -q --durations=10

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

# Reproducible benchmarks (docs/benchmarks.md, "How to run"): each prints a table and writes its JSON to
# benchmarks/results/. Run one alone on a quiet machine (2 cores: any other job moves every latency). Extra flags:
# make bench-sweep BENCH_ARGS="--model digits-cnn --out benchmarks/results/sweep_digits.json". Research scripts
# (benchmarks/research/) have no target. Times are the last runs' on the 2-vCPU development VM.
BENCH_ARGS ?=
BENCH := $(PY) -m benchmarks

# edgeopt bench's median vs a bare session.run loop, 2 zoo CNNs, interleaved rounds (goal <= 1.01): ~2 min.
bench-overhead: $(STAMP)
	$(BENCH).harness_overhead $(BENCH_ARGS)

# p50 with the power sampler on vs off (emulated Jetson INA3221) and the sampler's own CPU: ~5 min.
bench-energy: $(STAMP)
	$(BENCH).energy_sampling $(BENCH_ARGS)

# edgeopt profile's profiled inference over the unprofiled p50, 2 zoo CNNs x onnxruntime/OpenVINO: ~1 min.
bench-profile: $(TEST_STAMP)
	$(BENCH).profile $(BENCH_ARGS)

# the same model local vs on a loopback sshd: first-run and warm re-run cost, p50 agreement (root): ~3 min.
bench-ssh-overhead: sysdeps $(STAMP)
	$(BENCH).ssh_overhead $(BENCH_ARGS)

# a PP-OCRv4 rec sweep over loopback SSH with the served agent vs a fresh agent per request (root): ~6 min.
bench-ssh-sweep: sysdeps $(TEST_STAMP)
	$(BENCH).ssh_sweep $(BENCH_ARGS)

# 1, 4 and 16 loopback sshd devices, local executor vs Ray: fleet wall / one device, host CPU (root): ~5 min.
bench-fleet: sysdeps $(TEST_STAMP)
	$(BENCH).fleet $(BENCH_ARGS)

# 1000 local + 300 SSH benches in one process, sampled for leaks (docs/reliability.md, Soak): ~30-60 min on 2 cores.
bench-soak: sysdeps $(STAMP)
	$(BENCH).soak $(BENCH_ARGS)

# each format's size, latency and fidelity vs ONNX FP32 (TFLite rows need edgeopt tools install tflite): ~5 min.
bench-formats: $(TEST_STAMP)
	$(BENCH).formats $(BENCH_ARGS)

# every ONNX recipe on a trained digits CNN and packaged PP-OCR / silero-vad models (trains the CNN once): ~15 min.
bench-recipes: $(TEST_STAMP)
	$(BENCH).recipes $(BENCH_ARGS)

# why quantize_int8's defaults: one option changed at a time (reads the digits CNN bench-recipes caches): ~10 min.
bench-int8-defaults: $(TEST_STAMP)
	$(BENCH).int8_defaults $(BENCH_ARGS)

# a 13-level sweep of PP-OCRv4 rec with the INT8 search, its wall time and ORT quantize_static: ~2 min.
bench-sweep: $(TEST_STAMP)
	$(BENCH).sweep --search $(BENCH_ARGS)

# issue 21's goals on 3 packaged models x 2 thresholds x 1/2 threads: shipped = measured, never dominated, stable,
# fast enough (a second fresh sweep each): ~50 min.
bench-ship-goals: $(TEST_STAMP)
	$(BENCH).ship_goals --repeat $(BENCH_ARGS)

# issue 22's LLM goals on a random tiny Llama: TTFT/TPOT vs the runtimes' own timing, stock int4, KV bytes: ~2 min.
bench-llm-goals: $(TEST_STAMP)
	$(BENCH).llm_goals --hidden 384 --layers 6 --rounds 3 --reps 5 --gen 64 --prompt 128 --depth 1024 $(BENCH_ARGS)

# data-aware INT4 (AWQ, scale estimation) vs data-free on the trained zoo LLM, OpenVINO GenAI: ~2 min.
bench-llm-awq: $(TEST_STAMP)
	$(BENCH).llm_awq $(BENCH_ARGS)

# issue 33's llama.cpp goals: pp/tg vs llama.cpp's counters of a plain run, Q4_K_M vs F16 decode at Qwen2-0.5B's
# shapes (GGUFs cached in out/llamacpp-goals/), the zoo LLM swept twice over the three generative runtimes
# (needs llama-cpp-python, the [llamacpp] extra): ~10 min with the caches warm (see docs/benchmarks.md).
bench-llamacpp-goals: $(TEST_STAMP)
	$(BENCH).llamacpp_goals $(BENCH_ARGS)

# host peak RSS and wall per hostile result class (lying fake agent), local and loopback SSH (root): ~5-8 min.
bench-hostile: sysdeps $(STAMP)
	$(BENCH).hostile_results $(BENCH_ARGS)

# issue 22's checks at Qwen2-0.5B's shapes, one step after the other into benchmarks/results/llm_05b.json
# (models in /tmp/edgeopt-05b, ~5 GB): build ~3 min, KV ~6 min, timing, scaling, stock int4: ~30-40 min in all.
bench-llm-05b: $(TEST_STAMP)
	$(BENCH).llm_05b_build $(BENCH_ARGS)
	$(BENCH).llm_05b_kv
	$(BENCH).llm_05b_timing
	$(BENCH).llm_05b_scaling
	$(BENCH).llm_stock_int4
	$(BENCH).llm_05b_report

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache .mypy_cache
