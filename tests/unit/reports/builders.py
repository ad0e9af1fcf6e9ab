"""A complete :class:`QualifyResult` from synthetic runs and the real gates: what the report tests render."""

from __future__ import annotations

from typing import Any

from edgeopt.qualify.costs import cost_per_million
from edgeopt.qualify.gate_spec import Gates
from edgeopt.qualify.gates import GateContext, error_results, evaluate
from edgeopt.qualify.result import DeviceResult, GateStatus, ModelInfo, QualifyResult, SweepPoint, exit_code_for
from tests.synthetic_results import NO_SENSOR, bench_result, frames, samples

GATES = {"latency": {"percentile": "p99", "max_ms": 1.5}, "memory": {"max_mb": 64}, "energy": {"max_mj": 100},
         "deadline_miss": {"fps": 30, "max_pct": 5}, "model_size": {"max_mb": 1}}


def device(label: str, median_ms: float = 1.0, *, error: str | None = None, gates: dict[str, Any] = GATES
           ) -> DeviceResult:
    g = Gates.model_validate(gates)
    if error is not None:
        return DeviceResult(label=label, target="testboard", runner=f"ssh:{label}", status="error", error=error,
                            passed=False, gates=error_results(g, label, error))
    bench = bench_result(samples(1500, median_ms), power=NO_SENSOR)
    paced = bench_result(samples(100, median_ms), frames=frames(30, 100, misses=2), pacing_fps=30)
    rows = evaluate(g, GateContext(device=label, bench=bench, paced=paced))
    assert bench.energy is not None and bench.energy.energy_per_inference_mj is not None
    return DeviceResult(label=label, target="testboard", runner="local", status="ok",
                        passed=all(r.status is GateStatus.PASS for r in rows), bench=bench, paced=paced, gates=rows,
                        costs=cost_per_million(bench.energy.energy_per_inference_mj, source="estimate"),
                        history_run_id=7)


def qualify_result(devices: list[DeviceResult], *, name: str = "demo", description: str = "a demo",
                   sweep: list[SweepPoint] | None = None, gates: dict[str, Any] = GATES) -> QualifyResult:
    return QualifyResult(
        edgeopt_version="0.1.0", name=name, description=description, spec_path="/specs/demo.yaml",
        spec_sha256="12" * 32, profiles=[], spec={"name": name, "gates": gates}, started_at="2026-01-01T00:00:00Z",
        seconds=12.5, passed=all(d.passed for d in devices), exit_code=exit_code_for(devices),
        model=ModelInfo(reference_path="/models/net.onnx", reference_sha256="ab" * 32,
                        qualified={"*": "/models/net.onnx"}, qualified_sha256={"*": "ab" * 32}, recipe=None,
                        source="model"),
        retention={}, devices=devices, sweep=sweep,
        fingerprint={"seed": 0, "measure": {"iterations": 200}, "host": {"python": "3.11"}},
        history_db="/tmp/h.sqlite3", group_id="g1", report_dir="/tmp/out",
        reports={"json": "result.json", "html": "report.html", "junit": "junit.xml", "markdown": "summary.md"},
    )
