"""The generic engine's ``history_row`` and stored-result reader (a plug-in kind's ``edgeopt bench MODEL``,
:class:`KindBenchResult`, whose descriptor names none of its own).

Its numbers live in the cells tables (:mod:`.cells_rows`: every cell, metric, summary and raw reading), which
``history``, ``compare`` and the qualify regression floor read. The version-1 columns made for one forward pass
hold the kind's **rank metric** in its first cell that has it (``latency_ms_p50/p99/mean`` = its p50, p99 and mean,
or its single value; in the metric's own unit) so that ``edgeopt history`` lists the run beside the others;
``throughput_ips`` is 0, memory and energy are null. The whole result without raw readings is ``result_json``.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import jsonio
from ..metrics.kind_result import KindBenchResult
from ..registry import get_kind
from .bench_runs import RESULT_MAX_BYTES, RunFacts


def kind_facts(result: KindBenchResult) -> RunFacts:
    """The ``runs`` row facts of ``result`` (no raw-sample blob: the readings go to the cells tables)."""
    rank = get_kind(result.model_kind).rank_metric
    found = next((s for c in result.cells for s in c.series if s.metric == rank), None)
    summary = found.summary if found is not None else {}
    head = summary.get("p50", summary.get("value", 0.0))
    return RunFacts(
        model_name=Path(result.model.path).stem, model_path=result.model.path, model_sha256=result.model.sha256,
        model_size_bytes=result.model.size_bytes, target=result.target, runner=result.runner,
        runtime=result.runtime.name, runtime_version=result.runtime.version, edgeopt_version=result.edgeopt_version,
        valid=result.valid, started_at=result.started_at,
        latency_ms=(head, summary.get("p99", head), summary.get("mean", head)), throughput_ips=0.0,
        memory_mb_peak=None, energy_mj=None, energy_source=None, seed=result.settings.seed,
        settings_json=json.dumps({**result.settings.model_dump(mode="json"), "workload": result.workload}),
        environment=dict(result.environment), result_json=result.without_readings().model_dump_json())


def kind_result_of(text: str) -> KindBenchResult:
    """A stored ``result_json`` of a generic-engine run as its result (cells without their raw readings)."""
    return jsonio.validate(KindBenchResult, text, max_bytes=RESULT_MAX_BYTES)
