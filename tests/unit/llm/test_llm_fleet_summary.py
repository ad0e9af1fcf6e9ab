"""The LLM fleet sweep's summary (per level the devices' decode-rate spread, recommendations, agreement) and its
exit code (the ONNX fleet sweep's rule on LLM rows)."""

from __future__ import annotations

from edgeopt.llm.retention import LlmRetention
from edgeopt.llm.sweep_fleet import LLM_FLEET_SWEEP, LlmFleetSweepRow
from edgeopt.llm.sweep_result import LlmSweepLevel, LlmSweepResult
from edgeopt.sweep.fleet.result import fleet_sweep_exit_code, summarize


def _level(name: str, tok_s: float | None, retention: float = 1.0) -> LlmSweepLevel:
    return LlmSweepLevel.model_construct(name=name, runtime="onnxruntime_genai", rank_tokens_per_s=tok_s,
                                         retention=LlmRetention.model_construct(retention=retention),
                                         passed=retention >= 0.95)


def _row(name: str, rec: str | None, fp32: float, int4: float | None, int4_retention: float = 0.96
         ) -> LlmFleetSweepRow:
    result = LlmSweepResult.model_construct(levels=[_level("fp32", fp32), _level("int4", int4, int4_retention)])
    return LlmFleetSweepRow(device=name, target="rpi5", runner=f"ssh:pi@{name}:22", status="ok", seconds=9.0,
                            result=result, recommendation=rec)


def _error(name: str, kind: str = "dependency") -> LlmFleetSweepRow:
    return LlmFleetSweepRow(device=name, target="rpi5", runner=f"ssh:pi@{name}:22", status="error",
                            error="no onnxruntime_genai", error_kind=kind, seconds=0.1)


def test_decode_rate_spread_per_level_and_agreement():
    rows = [_row("pi-1", "int4@onnxruntime_genai", 100.0, 300.0), _row("pi-2", "int4@onnxruntime_genai", 90.0, 250.0),
            _row("pi-3", "int4@onnxruntime_genai", 95.0, 280.0, 0.97), _error("pi-4")]
    s = summarize(rows, LLM_FLEET_SWEEP)
    assert s.devices == 4 and s.ok == 3 and s.failed == ["pi-4"]
    fp32, int4 = s.levels
    assert (fp32.name, fp32.devices, fp32.tokens_per_s_median, fp32.min_device, fp32.max_device) == \
        ("fp32", 3, 95.0, "pi-2", "pi-1")
    assert (int4.tokens_per_s_min, int4.tokens_per_s_max, int4.retention_min) == (250.0, 300.0, 0.96)
    assert s.agree and s.recommendation == "int4@onnxruntime_genai"
    assert fleet_sweep_exit_code(rows) == 1 and fleet_sweep_exit_code(rows[:3]) == 0


def test_untimed_level_disagreement_and_every_device_failing():
    rows = [_row("pi-1", "int4@onnxruntime_genai", 100.0, None), _row("pi-2", None, 90.0, 250.0, 0.5)]
    s = summarize(rows, LLM_FLEET_SWEEP)
    assert [lv.devices for lv in s.levels] == [2, 1]  # pi-1's int4 has no decode time: not in the spread
    assert s.levels[1].passed_on == [] and not s.agree and s.recommendation is None
    assert fleet_sweep_exit_code(rows) == 1
    assert fleet_sweep_exit_code([_error("a"), _error("b")]) == 3
    assert fleet_sweep_exit_code([_error("a", "trust"), _error("b", "trust")]) == 4
