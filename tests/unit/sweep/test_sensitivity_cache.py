"""Sensitivity is cached by what it depends on: another threshold re-uses it, another metric or runtime does not."""

from __future__ import annotations

from pathlib import Path

from edgeopt.sweep.int8.sensitivity_cache import (
    LatencyEntry,
    LatencyKey,
    NodeScore,
    SensitivityCache,
    SensitivityKey,
)


def key(**over: object) -> SensitivityKey:
    base: dict[str, object] = {"model_sha256": "ab" * 32, "runtime": "openvino", "runtime_version": "2026.4",
                               "quantizer": {"calibration_method": "minmax", "per_channel": True},
                               "eval_digest": "e1", "metric": "agreement", "output": "0"}
    return SensitivityKey.model_validate({**base, **over})


def test_computed_once_then_read_back(tmp_path: Path) -> None:
    cache = SensitivityCache(tmp_path)
    calls: list[int] = []

    def compute() -> tuple[float, float, dict[str, NodeScore]]:
        calls.append(1)
        return 0.96, 0.2, {"conv1": NodeScore(retention=0.97, rel_err=0.1)}

    first, hit1 = cache.sensitivity_or_compute(key(), compute)
    second, hit2 = SensitivityCache(tmp_path).sensitivity_or_compute(key(), compute)  # a new sweep, same dir
    assert (hit1, hit2, len(calls)) == (False, True, 1)
    assert second.nodes == first.nodes and second.baseline_retention == 0.96


def test_what_the_ranking_depends_on_is_in_the_key(tmp_path: Path) -> None:
    cache = SensitivityCache(tmp_path)
    cache.sensitivity_or_compute(key(), lambda: (0.9, 0.1, {}))
    for other in (key(metric="cosine"), key(runtime="onnxruntime"), key(eval_digest="e2"),
                  key(quantizer={"calibration_method": "entropy", "per_channel": True}), key(output="1")):
        assert cache.sensitivity(other) is None, other
    assert cache.sensitivity(key()) is not None


def test_disabled_cache_reads_nothing_and_damaged_entries_are_ignored(tmp_path: Path) -> None:
    SensitivityCache(tmp_path).sensitivity_or_compute(key(), lambda: (0.9, 0.1, {}))
    assert SensitivityCache(tmp_path, enabled=False).sensitivity(key()) is None
    (tmp_path / f"{key().digest()}.json").write_text('{"key": 1}')
    assert SensitivityCache(tmp_path).sensitivity(key()) is None


def test_latency_gains_round_trip(tmp_path: Path) -> None:
    lk = LatencyKey(model_sha256="cd" * 32, runtime="openvino", quantizer={}, device="local", threads=1)
    cache = SensitivityCache(tmp_path)
    cache.put_gains(LatencyEntry(key=lk, gain_ms={"conv1": 0.25}, seconds=1.0))
    assert cache.gains(lk) is not None and cache.gains(lk).gain_ms == {"conv1": 0.25}  # type: ignore[union-attr]
    assert cache.gains(lk.model_copy(update={"threads": 2})) is None
    # gains from an older layer-to-node mapping (edgeopt.profile.mapping.MAPPING_VERSION) are profiled again
    assert cache.gains(lk.model_copy(update={"mapping": lk.mapping - 1})) is None
