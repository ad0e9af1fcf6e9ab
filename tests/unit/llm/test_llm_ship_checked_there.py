"""A fleet LLM sweep on a worker that does not share the host's paths checks a copy of the recommended folder on the
device; the host re-ships from its own level folder and keeps that check only for the same files (path, size,
SHA-256), never for files that differ from the ones re-scored."""

from __future__ import annotations

from pathlib import Path

from edgeopt.deploy import ShippedCheck, load_deployment
from edgeopt.llm.retention import LlmRetention
from edgeopt.llm.sweep_result import LlmRecommendation, LlmSweepLevel, LlmSweepResult
from edgeopt.llm.sweep_ship import ship_llm


def _result(folder: Path) -> LlmSweepResult:
    level = LlmSweepLevel.model_construct(
        name="int8", runtime="onnxruntime_genai", folder=str(folder), size_bytes=10, runtime_version="0.9",
        retention=LlmRetention.model_construct(retention=0.97, positions=30), passed=True, cpu="cpu", cpu_flags=[],
        tpot_ms_p50=2.0, rank_tokens_per_s=500.0, ttft_ms_p50=3.0)
    rec = LlmRecommendation(name="int8", runtime="onnxruntime_genai", folder=str(folder), retention=0.97,
                            decode_tokens_per_s=500.0, reason="fastest")
    return LlmSweepResult.model_construct(target="local", metric="top1", min_retention=0.9, model_sha256="ab",
                                          workload={"threads": [0]}, levels=[level], recommendation=rec,
                                          warnings=[])


def _level(root: Path, weights: bytes) -> Path:
    folder = root / "int8"
    folder.mkdir(parents=True)
    (folder / "genai_config.json").write_text("{}\n")
    (folder / "model.onnx").write_bytes(weights)
    return folder


def _device_check(tmp_path: Path, weights: bytes) -> ShippedCheck:
    """What the device's job records: its own copy shipped, then a passing check of exactly those files."""
    worker = ship_llm(_result(_level(tmp_path / "worker", weights)), tmp_path / "worker-out", device="lab-00")
    deployment, _ = load_deployment(tmp_path / "worker-out" / "recommended")
    assert worker.recommendation is not None and worker.recommendation.shipped_check is None
    return ShippedCheck(retention_as_shipped=0.97, retention_with_defaults=0.97, defaults_pass=True,
                        retention_measured=0.97, tolerance=0.002, passed=True, files=deployment.files)


def test_the_devices_check_is_kept_for_the_same_files(tmp_path: Path) -> None:
    check = _device_check(tmp_path, b"weights")
    shipped = ship_llm(_result(_level(tmp_path / "host", b"weights")), tmp_path / "out", device="lab-00", check=check)
    assert shipped.recommendation is not None and shipped.recommendation.shipped_check == check
    assert load_deployment(tmp_path / "out" / "recommended")[0].shipped_check == check
    assert shipped.warnings == []


def test_the_devices_check_is_dropped_for_other_files(tmp_path: Path) -> None:
    check = _device_check(tmp_path, b"weights")
    shipped = ship_llm(_result(_level(tmp_path / "host", b"WEIGHTS")), tmp_path / "out", device="lab-00", check=check)
    assert shipped.recommendation is not None and shipped.recommendation.shipped_check is None
    assert load_deployment(tmp_path / "out" / "recommended")[0].shipped_check is None
    (warning,) = shipped.warnings
    assert warning.startswith("shipped check of int8/onnxruntime_genai dropped: the files shipped here differ")
