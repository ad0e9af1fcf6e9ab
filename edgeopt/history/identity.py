"""What a stored run measured, as far as comparability goes (model, device, target, runtime, settings, kind), and
which differences make two runs measure different things: read by ``compare``, the noise floor, baselines and the
qualify regression gate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..metrics.result import BenchResult
from .records import RunRecord

# What makes two runs measure different things (not one thing twice): the regression gate and ``baseline set``
# refuse these unless told otherwise; the other notes (device, runtime version, settings) are reported only.
BLOCKING = ("model", "runtime", "target")


@dataclass(frozen=True)
class RunIdentity:
    """What a run measured, as far as comparability goes: model, device, runtime, settings."""

    model_name: str
    model_sha256: str
    device: str
    target: str
    runtime: str
    runtime_version: str
    settings: Mapping[str, Any]
    model_kind: str | None = None  # None: not known (a row written without it); noise_floors needs it

    @classmethod
    def of(cls, r: RunRecord, model_kind: str | None = None) -> RunIdentity:
        """The identity of a stored run (its kind: ``model_kind``, else the row's; ``HistoryStore.kind_of`` reads
        a row written without one)."""
        return cls(r.model_name, r.model_sha256, r.device, r.target, r.runtime, r.runtime_version, r.settings,
                   model_kind or r.model_kind)

    @classmethod
    def of_result(cls, result: BenchResult, device: str) -> RunIdentity:
        """The identity a benchmark result will have once recorded on ``device``."""
        return cls(Path(result.model.path).stem, result.model.sha256, device, result.target, result.runtime.name,
                   result.runtime.version, result.settings.model_dump(), result.model_kind)


def comparability_notes(a: RunIdentity, b: RunIdentity) -> list[str]:
    """Differences between two runs besides latency, each a note starting with ``different <what>``."""
    notes = []
    if a.model_sha256 != b.model_sha256:
        notes.append(f"different models: {a.model_name} ({a.model_sha256[:12]}) vs "
                     f"{b.model_name} ({b.model_sha256[:12]})")
    if a.target != b.target:
        notes.append(f"different targets: {a.target} vs {b.target}")
    if a.device != b.device or a.target != b.target:
        notes.append(f"different devices: {a.device} ({a.target}) vs {b.device} ({b.target})")
    if a.runtime != b.runtime:
        notes.append(f"different runtimes: {a.runtime} {a.runtime_version} vs {b.runtime} {b.runtime_version}")
    elif a.runtime_version != b.runtime_version:
        notes.append(f"different runtime versions: {a.runtime} {a.runtime_version} vs {b.runtime_version}")
    for key in ("threads", "streams", "batch", "pacing_fps"):
        if a.settings.get(key) != b.settings.get(key):
            notes.append(f"different {key}: {a.settings.get(key)} vs {b.settings.get(key)}")
    return notes


def blocking_notes(notes: list[str], allowed: Sequence[str] = ()) -> list[str]:
    """The notes that make two runs not comparable (model, runtime, target), less the kinds in ``allowed``."""
    heads = {"model": "different models", "runtime": "different runtimes:", "target": "different targets"}
    return [n for n in notes if any(n.startswith(heads[k]) for k in BLOCKING if k not in allowed)]


