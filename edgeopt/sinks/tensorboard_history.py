"""``edgeopt history --tensorboard DIR``: the history's runs as TensorBoard scalars.

One curve per model, device, runtime and metric (tag ``<model>@<device>/<runtime>/<metric>``), the run id as the
step and the time it was recorded as the wall time: ``tensorboard --logdir DIR`` then shows how a model's latency,
throughput, memory and energy moved across runs.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from pathlib import Path

from ..history import RunRecord
from .tensorboard_events import Scalar, write_scalars

METRICS = ("latency_ms_p50", "latency_ms_p99", "latency_ms_mean", "throughput_ips", "memory_mb_peak", "energy_mj")


def history_scalars(runs: Sequence[RunRecord]) -> list[Scalar]:
    """The scalars of ``runs`` (oldest first; a metric a run did not measure is left out)."""
    out = []
    for r in sorted(runs, key=lambda run: run.id):
        wall = _dt.datetime.fromisoformat(r.created_at).timestamp()
        prefix = f"{r.model_name}@{r.device}/{r.runtime}"
        for name in METRICS:
            value = getattr(r, name)
            if value is not None:
                out.append(Scalar(f"{prefix}/{name}", r.id, float(value), wall))
    return out


def export_history(runs: Sequence[RunRecord], logdir: Path) -> Path:
    """Write ``runs`` as one event file under ``logdir``; returns the file."""
    return write_scalars(logdir, history_scalars(runs))
