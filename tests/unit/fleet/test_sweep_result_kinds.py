"""One fleet-sweep result for every kind (issue 30, item 4): the kind gives its sweep result, its level spread and
its ``kind`` name; ``fleet-sweep.json`` keeps each kind's keys in the order its documented schema has them."""

from __future__ import annotations

import json

from edgeopt.llm.retention import LlmRetention
from edgeopt.llm.sweep_fleet import LLM_FLEET_SWEEP
from edgeopt.llm.sweep_result import LlmSweepLevel, LlmSweepResult
from edgeopt.sweep.fleet.result import ONE_PASS
from edgeopt.sweep.result import Level, SweepResult

HEADER = ["schema_version", "edgeopt_version", "fleet_id", "model", "model_sha256", "selection", "executor", "jobs",
          "deadline_s", "started_at", "seconds"]
TAIL = ["out_dir", "rows", "summary", "warnings", "exit_code"]
ROW = ["device", "target", "runner", "tags", "status", "error", "error_kind", "seconds", "started_at", "worker",
       "result", "recommendation", "history_run_ids"]
SUMMARY = ["devices", "ok", "failed", "levels", "recommendations", "agree", "recommendation"]


def _fields(**extra: object) -> dict[str, object]:
    return {"edgeopt_version": "0", "fleet_id": "f", "model": "m", "model_sha256": "s", "selection": ["tag:lab"],
            "executor": "local", "jobs": 2, "deadline_s": 60.0, "started_at": "t", "seconds": 1.0,
            "host_seconds": 0.5, "warnings": [], **extra}


def _row(kind, name: str, result: object, rec: str | None):
    return kind.row(device=name, target="rpi5", runner=f"ssh:pi@{name}:22", status="ok", seconds=1.0, result=result,
                    recommendation=rec, level_runs=[("level", "bench")], device_warnings=["skipped one"])


def test_the_one_pass_kind_writes_targets_and_no_kind(tmp_path):
    lv = Level.model_construct(recipe="fp16", runtime="onnxruntime", latency_ms=2.0, retention=0.999, passed=True)
    rows = [_row(ONE_PASS, d, SweepResult.model_construct(levels=[lv]), "fp16/onnxruntime") for d in ("a", "b")]
    result = ONE_PASS.write(rows, tmp_path, **_fields(targets=["rpi5"]))
    doc = json.loads((tmp_path / "fleet-sweep.json").read_text())
    assert list(doc) == [*HEADER, "host_seconds", "targets", *TAIL] and doc["exit_code"] == result.exit_code == 0
    assert list(doc["rows"][0]) == ROW and list(doc["summary"]) == SUMMARY  # level runs, device warnings: not JSON
    assert list(doc["summary"]["levels"][0]) == ["recipe", "runtime", "devices", "median_ms", "min_ms", "min_device",
                                                 "max_ms", "max_device", "retention_min", "passed_on"]


def test_the_llm_kind_writes_its_kind_and_no_targets(tmp_path):
    lv = LlmSweepLevel.model_construct(name="int4", runtime="onnxruntime_genai", rank_tokens_per_s=50.0,
                                       retention=LlmRetention.model_construct(retention=0.97), passed=True)
    result_of = LlmSweepResult.model_construct
    rows = [_row(LLM_FLEET_SWEEP, "a", result_of(levels=[lv]), "int4@onnxruntime_genai"),
            _row(LLM_FLEET_SWEEP, "b", result_of(levels=[lv]), None)]
    result = LLM_FLEET_SWEEP.write(rows, tmp_path, **_fields())
    doc = json.loads((tmp_path / "fleet-sweep.json").read_text())
    assert list(doc) == [*HEADER, "kind", "host_seconds", *TAIL] and doc["kind"] == "llm_fleet_sweep"
    assert doc["exit_code"] == result.exit_code == 1 and not doc["summary"]["agree"]  # b recommends nothing
    assert list(doc["rows"][0]) == ROW and list(doc["summary"]) == SUMMARY
    assert doc["summary"]["levels"] == [{
        "name": "int4", "runtime": "onnxruntime_genai", "devices": 2, "tokens_per_s_median": 50.0,
        "tokens_per_s_min": 50.0, "min_device": "a", "tokens_per_s_max": 50.0, "max_device": "a",
        "retention_min": 0.97, "passed_on": ["a", "b"]}]
