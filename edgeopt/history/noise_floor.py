"""The noise floor of a comparison: how far apart repeated runs of the same model, device, runtime and settings
landed in the history, per cell and metric (docs/history.md, "Noise floor")."""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import median

from ..errors import first_line
from ..metrics.cells import MetricSeries
from ..registry import get_kind
from ..registry.kind_spec import KindDescriptor, MetricSpec
from .identity import RunIdentity, comparability_notes
from .store import HistoryError, HistoryStore


def judged(spec: MetricSpec, series: MetricSeries) -> list[float]:
    """The readings a metric is judged on, as "lower is better" values: a rate (higher is better) as the time per
    unit, ``1000 / value``, so that "slower" reads the same for every metric."""
    if spec.higher_is_better:
        return [1000.0 / v for v in series.readings if v > 0]
    return list(series.readings)


def center(spec: MetricSpec, series: MetricSeries) -> float | None:
    """Where a run's series sits, for the noise floor: its reported p50 when the metric has one, else the median of
    its judged readings, else its single value (judged the same way)."""
    if "p50" in spec.percentiles and "p50" in series.summary:
        return series.summary["p50"]
    values = judged(spec, series)
    if values:
        return median(values)
    value = series.summary.get("value")
    if value is None or (spec.higher_is_better and value <= 0):
        return None
    return 1000.0 / value if spec.higher_is_better else value


def _kind(identity: RunIdentity) -> KindDescriptor:
    if identity.model_kind is None:  # a caller's slip, not input: RunIdentity.of(record) of a row without a kind
        raise ValueError("a noise floor needs the run's model kind: RunIdentity.of(record, store.kind_of(record))")
    return get_kind(identity.model_kind)


def noise_floors(store: HistoryStore, identity: RunIdentity, *, exclude: Sequence[int] = (),
                 ) -> dict[tuple[str, str], tuple[float | None, int]]:
    """Per (cell, metric) of ``identity``'s kind: ``(spread_pct, runs)``, how far apart the centres of repeated runs
    are, in percent (``max / min - 1``), over the valid runs of the same kind, model, device, runtime and settings,
    less ``exclude``. The spread is None with fewer than two such runs (nothing to learn the run-to-run spread from).
    A repeated run whose cells cannot be read is left out, its reason added to ``store.skipped``."""
    specs = {m.name: m for m in _kind(identity).sampled_metrics()}
    by_p50 = tuple(m.name for m in specs.values() if "p50" in m.percentiles)  # centred on a summary: no readings
    centres: dict[tuple[str, str], list[float]] = {}
    for r in store.runs(model=identity.model_sha256, target=identity.device, limit=500):
        if r.id in exclude or not r.valid or comparability_notes(identity, RunIdentity.of(r)) \
                or store.kind_of(r) != identity.model_kind:
            continue
        try:
            cells = store.cells(r.id, metrics=tuple(specs), summaries_only=by_p50)
        except HistoryError as exc:
            note = first_line(exc, limit=300)
            if note not in store.skipped:
                store.skipped.append(note)
            continue
        for cell in cells:
            for s in cell.series:
                value = center(specs[s.metric], s)
                if value is not None and math.isfinite(value) and value > 0:
                    centres.setdefault((cell.key, s.metric), []).append(value)
    return {k: ((max(v) / min(v) - 1.0) * 100.0 if len(v) >= 2 else None, len(v)) for k, v in centres.items()}


def noise_floor(store: HistoryStore, identity: RunIdentity, *, exclude: Sequence[int] = ()) -> tuple[float | None, int]:
    """``(spread_pct, runs)`` of a one-pass run's rank metric (latency): :func:`noise_floors` of its one cell."""
    rank = _kind(identity).rank_metric
    return noise_floors(store, identity, exclude=exclude).get(("", rank), (None, 0))
