"""How a generic-engine result (a plug-in kind's ``edgeopt bench MODEL``, :class:`KindBenchResult`) fills a row of
the history's ``runs`` table.

Its numbers live in the cells tables (:mod:`.cells_rows`: every cell, metric, summary and raw reading), which
``history``, ``compare`` and the qualify regression floor read. The version-1 columns made for one forward pass
hold the kind's **rank metric** in its first cell that has it (``latency_ms_p50/p99/mean`` = its p50, p99 and mean,
or its single value; in the metric's own unit) so that ``edgeopt history`` lists the run beside the others;
``throughput_ips`` is 0, memory and energy are null. The whole result without raw readings is ``result_json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import jsonio
from ..metrics.kind_result import KindBenchResult
from ..registry import get_kind
from .bench_runs import RESULT_MAX_BYTES


def kind_values(result: KindBenchResult, *, kind: str, device: str, verdict: str | None, group_id: str | None,
                label: str | None, now: str) -> dict[str, Any]:
    """The ``runs`` row of ``result`` (no raw-sample blob: the readings go to the cells tables)."""
    rank = get_kind(result.model_kind).rank_metric
    found = next((s for c in result.cells for s in c.series if s.metric == rank), None)
    summary = found.summary if found is not None else {}
    head = summary.get("p50", summary.get("value", 0.0))
    env = dict(result.environment)
    name, version = result.runtime.name, result.runtime.version
    return {
        "kind": kind, "created_at": now, "started_at": result.started_at, "model_name": Path(result.model.path).stem,
        "model_path": result.model.path, "model_sha256": result.model.sha256,
        "model_size_bytes": result.model.size_bytes, "target": result.target, "device": device,
        "runner": result.runner, "runtime": name, "runtime_version": version,
        "edgeopt_version": result.edgeopt_version, "valid": int(result.valid), "verdict": verdict,
        "latency_ms_p50": head, "latency_ms_p99": summary.get("p99", head),
        "latency_ms_mean": summary.get("mean", head), "throughput_ips": 0.0, "memory_mb_peak": None,
        "energy_mj": None, "energy_source": None, "samples_count": 0, "samples_format": None, "samples": None,
        "group_id": group_id, "label": label, "seed": result.settings.seed,
        "settings_json": json.dumps({**result.settings.model_dump(mode="json"), "workload": result.workload}),
        "environment_json": json.dumps(env, default=str),
        "versions_json": json.dumps({"edgeopt": result.edgeopt_version, name: version, "python": env.get("python"),
                                     "numpy": env.get("numpy")}, default=str),
        "result_json": result.without_readings().model_dump_json(),
    }


def kind_result_of(text: str) -> KindBenchResult:
    """A stored ``result_json`` of a generic-engine run as its result (cells without their raw readings)."""
    return jsonio.validate(KindBenchResult, text, max_bytes=RESULT_MAX_BYTES)
