"""How a result of any kind fills a row of the history's ``runs`` table, and how a stored row reads back as a
:class:`RunRecord`.

A kind's ``history_row`` hook (:attr:`~edgeopt.registry.kind_spec.KindDescriptor.history_row`) gives the row's
facts (:class:`RunFacts`): which of its numbers fill the version-1 columns made for one forward pass (latency
p50/p99/mean, throughput, peak memory, energy), the stored result (``result_json``) and, for the one-pass kind
(:func:`tensor_facts`), its raw samples as a compact blob (:mod:`.codec`); :func:`run_values` makes the row. Every
number is also in the run's cells (:mod:`.cells_rows`). The SQLite file itself is :mod:`.store`'s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import jsonio
from ..metrics.result import BenchResult
from .codec import SAMPLES_FORMAT, encode_samples
from .records import RunRecord

# A row's JSON columns are read as untrusted (a device's values, a file edited by hand): settings, environment and
# versions are a few KiB, a stored result (LLM cells with every token latency) some MiB; nesting past
# jsonio.MAX_DEPTH makes the row unreadable (skipped with a warning), never a RecursionError.
COLUMN_MAX_BYTES = 16 << 20
RESULT_MAX_BYTES = 256 << 20

# The columns a RunRecord reads, in SELECT order (the samples blob and result_json are fetched on demand).
RUN_COLUMNS = (
    "id", "kind", "created_at", "started_at", "model_name", "model_path", "model_sha256", "model_size_bytes",
    "target", "device", "runner", "runtime", "runtime_version", "edgeopt_version", "valid", "verdict",
    "latency_ms_p50", "latency_ms_p99", "latency_ms_mean", "throughput_ips", "memory_mb_peak", "energy_mj",
    "energy_source", "samples_count", "group_id", "label", "seed", "settings_json", "environment_json",
    "versions_json", "model_kind",
)


def device_label(runner: str) -> str:
    """The device a result ran on, from its ``runner`` field: ``local`` or ``user@host:port``."""
    return runner.removeprefix("ssh:")


@dataclass(frozen=True)
class RunFacts:
    """What a kind's result puts in its ``runs`` row (a kind's ``history_row`` hook returns it): who measured what,
    and the version-1 columns made for one forward pass (the kind says which of its numbers fill them; every number
    is also in the run's cells)."""

    model_name: str
    model_path: str
    model_sha256: str
    model_size_bytes: int
    target: str
    runner: str
    runtime: str
    runtime_version: str
    edgeopt_version: str
    valid: bool
    started_at: str | None
    latency_ms: tuple[float | None, float | None, float | None]  # p50, p99, mean
    throughput_ips: float | None
    memory_mb_peak: float | None
    energy_mj: float | None
    energy_source: str | None
    seed: int
    settings_json: str
    environment: dict[str, Any]
    result_json: str
    samples: tuple[int, str | None, bytes | None] = (0, None, None)  # count, format, blob (one-pass raw samples)


def run_values(facts: RunFacts, *, kind: str, device: str | None, verdict: str | None, group_id: str | None,
               label: str | None, now: str) -> dict[str, Any]:
    """The ``runs`` row of a result of any kind, from its :class:`RunFacts` (``device`` None: from its runner)."""
    env = facts.environment
    versions = {"edgeopt": facts.edgeopt_version, facts.runtime: facts.runtime_version, "python": env.get("python"),
                "numpy": env.get("numpy")}
    p50, p99, mean = facts.latency_ms
    count, fmt, blob = facts.samples
    return {
        "kind": kind, "created_at": now, "started_at": facts.started_at, "model_name": facts.model_name,
        "model_path": facts.model_path, "model_sha256": facts.model_sha256, "model_size_bytes": facts.model_size_bytes,
        "target": facts.target, "device": device or device_label(facts.runner), "runner": facts.runner,
        "runtime": facts.runtime, "runtime_version": facts.runtime_version, "edgeopt_version": facts.edgeopt_version,
        "valid": int(facts.valid), "verdict": verdict, "latency_ms_p50": p50, "latency_ms_p99": p99,
        "latency_ms_mean": mean, "throughput_ips": facts.throughput_ips, "memory_mb_peak": facts.memory_mb_peak,
        "energy_mj": facts.energy_mj, "energy_source": facts.energy_source, "samples_count": count,
        "samples_format": fmt, "samples": blob, "group_id": group_id, "label": label, "seed": facts.seed,
        "settings_json": facts.settings_json, "environment_json": json.dumps(env, default=str),
        "versions_json": json.dumps(versions, default=str), "result_json": facts.result_json,
    }


def tensor_facts(result: BenchResult) -> RunFacts:
    """The one-pass kind's ``history_row``: its headline numbers (p50, p99, mean, throughput, peak memory, energy
    per inference), its raw samples as a blob when ``result.samples_ms`` holds them, the result without them."""
    samples = result.samples_ms
    blob = encode_samples(samples) if samples else None
    return RunFacts(
        model_name=Path(result.model.path).stem, model_path=result.model.path, model_sha256=result.model.sha256,
        model_size_bytes=result.model.size_bytes, target=result.target, runner=result.runner,
        runtime=result.runtime.name, runtime_version=result.runtime.version, edgeopt_version=result.edgeopt_version,
        valid=result.valid, started_at=result.run.started_at,
        latency_ms=(result.latency_ms.p50, result.latency_ms.p99, result.latency_ms.mean),
        throughput_ips=result.throughput_ips, memory_mb_peak=result.memory_mb.peak,
        energy_mj=result.energy.energy_per_inference_mj if result.energy else None,
        energy_source=result.energy.source if result.energy else None, seed=result.settings.seed,
        settings_json=result.settings.model_dump_json(), environment=dict(result.environment),
        result_json=result.model_dump_json(exclude={"samples_ms"}),
        samples=(len(samples) if samples else 0, SAMPLES_FORMAT if blob is not None else None, blob))


def tensor_result_of(text: str) -> BenchResult:
    """The one-pass kind's ``history_result``: a stored ``result_json`` as its result (without raw samples)."""
    return jsonio.validate(BenchResult, text, max_bytes=RESULT_MAX_BYTES)


def record_of(row: tuple[Any, ...], baselines: list[str]) -> RunRecord:
    """A ``runs`` row (:data:`RUN_COLUMNS`) as a :class:`RunRecord` with the baselines that point at it.

    Raises:
        ValueError / TypeError / KeyError: a damaged row: a JSON column too large, too deep or not JSON, a field
            of the wrong type (the store skips it with a warning).
    """
    data = dict(zip(RUN_COLUMNS, row, strict=True))
    for key in ("settings", "environment", "versions"):
        try:
            data[key] = jsonio.loads(data.pop(f"{key}_json"), max_bytes=COLUMN_MAX_BYTES)
        except ValueError as exc:  # JsonLimitError and JSONDecodeError: too large, too deep, not JSON
            raise ValueError(f"{key}_json: {exc}") from None
    data["valid"] = bool(data["valid"])
    data["baselines"] = baselines
    return RunRecord.model_validate(data)
