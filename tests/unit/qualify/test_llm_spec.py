"""LLM specs: the gates each kind of model takes (spec errors with file:line), the llm-* profiles, repetitions
from the gates' percentiles, and the LLM gates on a hand-made bench result (worst cell, INVALID percentiles,
estimates, the retention gate without held-out text)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from edgeopt.bench.llm.result import LlmBenchResult, LlmCell, LlmLoad, LlmModelFacts, LlmSamples
from edgeopt.bench.llm.workload import LlmWorkload
from edgeopt.qualify import QualifySpecError, load_spec
from edgeopt.qualify.gate_spec import Gates
from edgeopt.qualify.llm_engine import needed_repetitions, workload
from edgeopt.qualify.llm_gates import LlmGateContext, evaluate_llm
from edgeopt.qualify.llm_retention import retention_or_reason
from edgeopt.qualify.result import GateStatus

LLM = "name: demo\nmodel: {zoo: tiny-llama}\n"
ONNX = "name: demo\nmodel: {zoo: mobilenet-tiny}\n"


def _load(tmp_path: Path, text: str):
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(text))
    return load_spec(path)


def test_profiles_and_overrides_on_an_llm_spec(tmp_path):
    spec = _load(tmp_path, LLM + "extends: llm-server\ngates:\n  tpot_ms: {max_ms: 200}\n").spec
    assert spec.gates.ttft_ms.max_ms == 2000 and spec.gates.ttft_ms.percentile == "p99"
    assert spec.gates.tpot_ms.max_ms == 200 and spec.gates.tpot_ms.percentile == "p99"  # overridden key by key
    w = workload(spec)
    assert w.repetitions == 100  # TTFT p99: one reading per repetition, 100 needed
    assert w.prompt_tokens == (128,) and w.gen_tokens == (128,)


def test_repetitions_follow_the_gated_percentiles():
    gates = Gates.model_validate({"tpot_ms": {"percentile": "p99", "max_ms": 1}})
    assert needed_repetitions(gates, 12) == 10  # 11 token latencies per repetition: 100 by the 10th
    assert needed_repetitions(gates, 3) == 50
    assert needed_repetitions(Gates.model_validate({"ttft_ms": {"percentile": "p90", "max_ms": 1}}), 12) == 10


@pytest.mark.parametrize(("text", "key", "words"), [
    (LLM + "gates: {latency: {max_ms: 5}}\n", "gates.latency", "does not apply: the model is an LLM folder"),
    (ONNX + "gates: {tpot_ms: {max_ms: 5}}\n", "gates.tpot_ms", "does not apply: the model is a one-pass model"),
    (ONNX + "llm: {prompt_tokens: [8]}\ngates: {latency: {max_ms: 5}}\n", "llm", "the model is not one"),
    (LLM + "llm: {prompt_tokens: [0]}\ngates: {tpot_ms: {max_ms: 5}}\n", "llm.prompt_tokens", ">= 1"),
])
def test_a_gate_of_the_other_kind_is_a_spec_error_at_its_line(tmp_path, text, key, words):
    with pytest.raises(QualifySpecError) as info:
        _load(tmp_path, text)
    message = str(info.value)
    assert "spec.yaml:" in message and key in message and words in message, message


def _cell(prompt: int, ttft: list[float], tpot: list[float], **extra) -> LlmCell:
    return LlmCell(prompt_tokens=prompt, gen_tokens=12, context_depth=0, batch=1, threads=0, repetitions=len(ttft),
                   ttft_ms_p50=sorted(ttft)[len(ttft) // 2], tpot_ms_p50=sorted(tpot)[len(tpot) // 2],
                   decode_tokens_per_s=1000.0 / (sum(tpot) / len(tpot)), kv_cache_bytes=prompt * 4096,
                   samples=LlmSamples(ttft_ms=ttft, tpot_ms=tpot, decode_tokens_per_s=[1.0]), valid=True, **extra)


def _bench(*cells: LlmCell) -> LlmBenchResult:
    return LlmBenchResult(model_path="/m", model_format="onnxruntime_genai", runtime={"name": "onnxruntime_genai"},
                          runner="local", model=LlmModelFacts(layers=1, kv_heads=1, head_size=1, source="x"),
                          workload=LlmWorkload(), loads=[LlmLoad(threads=0, load_ms=1.0, rss_growth_mb=30.0)],
                          cells=list(cells), truncated=False, valid=True)


def test_llm_gates_judge_the_worst_cell_and_refuse_unsupported_percentiles():
    fast = _cell(8, [10.0] * 100, [2.0] * 200, energy_decode_mj_per_token=0.5, energy_source="estimate")
    slow = _cell(512, [10.0] * 98 + [900.0, 900.0], [2.0] * 198 + [40.0, 40.0], energy_decode_mj_per_token=3.0,
                 energy_source="estimate")
    gates = Gates.model_validate({
        "ttft_ms": {"percentile": "p99", "max_ms": 500}, "tpot_ms": {"percentile": "p50", "max_ms": 3},
        "decode_tokens_per_s": {"min_tokens_per_s": 100}, "kv_cache_mb": {"max_mb": 1},
        "energy_per_token": {"max_mj": 1, "require_measured": False}, "memory": {"max_mb": 20, "basis": "model"}})
    rows = {g.gate: g for g in evaluate_llm(gates, LlmGateContext("dev", _bench(fast, slow)))}
    assert rows["ttft_ms"].status is GateStatus.FAIL and "p512 g12 d0 b1 t0" in rows["ttft_ms"].detail
    assert rows["ttft_ms"].measured == pytest.approx(900.0)  # p99 of the slow cell's readings
    assert rows["tpot_ms"].status is GateStatus.PASS and rows["tpot_ms"].measured == 2.0
    assert rows["decode_tokens_per_s"].status is GateStatus.PASS and rows["decode_tokens_per_s"].comparison == ">="
    assert rows["kv_cache_mb"].status is GateStatus.FAIL and rows["kv_cache_mb"].measured == 2.0  # 512 x 4096 B
    assert rows["energy_per_token"].estimate and rows["energy_per_token"].detail.startswith("ESTIMATE")
    assert rows["energy_per_token"].status is GateStatus.FAIL and rows["energy_per_token"].measured == 3.0
    assert rows["memory"].status is GateStatus.FAIL and rows["memory"].measured == 30.0
    short = _cell(8, [1.0] * 10, [1.0] * 110)
    (row,) = evaluate_llm(Gates.model_validate({"ttft_ms": {"percentile": "p99", "max_ms": 500}}),
                          LlmGateContext("dev", _bench(short)))
    assert row.status is GateStatus.FAIL and row.detail.startswith("INVALID: p99 needs at least 100 repetitions")


def test_retention_gate_without_held_out_text_fails_saying_why(tmp_path):
    r = retention_or_reason(tmp_path / "ref", tmp_path / "cand", text=None, work=tmp_path / "work")
    assert r.retention is None and "needs llm.eval" in r.notes[0]
    (row,) = evaluate_llm(Gates.model_validate({"retention": {"min_ratio": 0.9}}),
                          LlmGateContext("dev", _bench(_cell(8, [1.0] * 10, [1.0] * 110)), retention=r))
    assert row.status is GateStatus.FAIL and "needs llm.eval" in row.detail


def test_a_device_that_is_not_its_targets_hardware_gets_a_failed_target_row_unless_allowed():
    """The shared target row (qualify/flow.py writes it for every kind) reads an LLM result as a one-pass one."""
    from edgeopt.qualify.gate_rows import target_row

    bench = _bench(_cell(8, [1.0] * 10, [1.0] * 110)).model_copy(
        update={"target": "rpi5", "target_mismatch": ["architecture: the device is x86_64, target rpi5 is aarch64"]})
    row = target_row("dev", bench.target_mismatch, bench.target, allowed=False)
    assert row.gate == "target" and row.status is GateStatus.FAIL and row.detail.startswith("TARGET MISMATCH")
    assert target_row("dev", bench.target_mismatch, bench.target, allowed=True).status is GateStatus.PASS
    assert target_row("dev", _bench().target_mismatch, "local", allowed=False) is None


GATE = "gates: {tpot_ms: {max_ms: 100}}\n"


def _llm_deployment(folder: Path, **settings: object) -> Path:
    """A deployment record around an onnxruntime-genai folder's marker file (as an LLM sweep's recommended/)."""
    from edgeopt.deploy import DeployedFile, Deployment, DeploymentMeasured, save_deployment
    from edgeopt.fsutil import sha256_file

    folder.mkdir()
    marker = folder / "genai_config.json"
    marker.write_text('{"model": {"type": "llama"}}\n')
    measured = DeploymentMeasured(target="local", metric="top1", min_retention=0.9, retention=0.95, latency_ms=5.0,
                                  size_bytes=marker.stat().st_size)
    save_deployment(folder, Deployment(
        name="int4-b32-rtn/onnxruntime_genai", recipe="int4-b32-rtn", model=marker.name, format="onnxruntime_genai",
        files=(DeployedFile(path=marker.name, sha256=sha256_file(marker), size_bytes=marker.stat().st_size,
                            role="model"),),
        runtime="onnxruntime_genai", runtime_version="0.1", measured=measured, **settings))
    return folder


def test_an_llm_deployments_threads_and_batch_apply_and_a_contradicting_llm_key_is_a_spec_error(tmp_path):
    """Qualify applies an LLM deployment as bench does (bench/llm/deployed.py): its threads, batch and runtime
    replace the workload's; an ``llm:`` key that contradicts them is a spec error at that key (exit 2), unless
    ``override_deployment: true``."""
    from edgeopt.deploy.use import open_deployment
    from edgeopt.qualify.llm_engine import _deployed

    folder = _llm_deployment(tmp_path / "recommended", threads=4, batch=2)
    use = open_deployment(folder)
    loaded = _load(tmp_path, f"name: d\nmodel: {{path: {folder}}}\nllm: {{prompt_tokens: [8]}}\n{GATE}")
    w, runtime, options = _deployed(loaded, use, workload(loaded.spec))
    assert (w.threads, w.batch, w.prompt_tokens, runtime, options) == ((4,), (2,), (8,), "onnxruntime_genai", {})

    agreeing = _load(tmp_path, f"name: d\nmodel: {{path: {folder}}}\nllm: {{threads: [4]}}\n{GATE}")
    assert _deployed(agreeing, use, workload(agreeing.spec))[0].threads == (4,)
    clash = _load(tmp_path, f"name: d\nmodel: {{path: {folder / 'deployment.json'}}}\nllm: {{batch: [1]}}\n{GATE}")
    with pytest.raises(QualifySpecError) as err:
        _deployed(clash, use, workload(clash.spec))
    message = str(err.value)
    assert "llm.batch: llm.batch 1 contradicts deployment" in message and "(batch 2)" in message
    assert "override_deployment: true" in message and len(message.splitlines()) == 1
    won = _load(tmp_path, f"name: d\nmodel: {{path: {folder}}}\nllm: {{batch: [1]}}\noverride_deployment: true\n{GATE}")
    assert _deployed(won, use, workload(won.spec))[0].batch == (1,)
