"""How a one-pass benchmark result (``edgeopt bench MODEL``, qualify, sweep) fills a row of the history's ``runs``
table, and how a stored row reads back as a :class:`RunRecord`.

The row's columns are the result's headline numbers (p50, p99, mean, throughput, peak memory, energy per
inference), its raw samples as a compact blob (:mod:`.codec`) and the whole result without them
(``result_json``). An LLM bench run fills the same columns its own way: :mod:`.llm_runs`. The SQLite file itself
is :mod:`.store`'s.
"""

from __future__ import annotations

import json
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


def bench_values(result: BenchResult, *, kind: str, device: str | None, verdict: str | None, group_id: str | None,
                 label: str | None, now: str) -> dict[str, Any]:
    """The ``runs`` row of ``result``; its raw samples as a blob when ``result.samples_ms`` holds them."""
    samples = result.samples_ms
    blob = encode_samples(samples) if samples else None
    env = dict(result.environment)
    versions = {"edgeopt": result.edgeopt_version, result.runtime.name: result.runtime.version,
                "python": env.get("python"), "numpy": env.get("numpy")}
    return {
        "kind": kind,
        "created_at": now,
        "started_at": result.run.started_at,
        "model_name": Path(result.model.path).stem,
        "model_path": result.model.path,
        "model_sha256": result.model.sha256,
        "model_size_bytes": result.model.size_bytes,
        "target": result.target,
        "device": device or device_label(result.runner),
        "runner": result.runner,
        "runtime": result.runtime.name,
        "runtime_version": result.runtime.version,
        "edgeopt_version": result.edgeopt_version,
        "valid": int(result.valid),
        "verdict": verdict,
        "latency_ms_p50": result.latency_ms.p50,
        "latency_ms_p99": result.latency_ms.p99,
        "latency_ms_mean": result.latency_ms.mean,
        "throughput_ips": result.throughput_ips,
        "memory_mb_peak": result.memory_mb.peak,
        "energy_mj": result.energy.energy_per_inference_mj if result.energy else None,
        "energy_source": result.energy.source if result.energy else None,
        "samples_count": len(samples) if samples else 0,
        "samples_format": SAMPLES_FORMAT if blob is not None else None,
        "samples": blob,
        "group_id": group_id,
        "label": label,
        "seed": result.settings.seed,
        "settings_json": result.settings.model_dump_json(),
        "environment_json": json.dumps(env, default=str),
        "versions_json": json.dumps(versions, default=str),
        "result_json": result.model_dump_json(exclude={"samples_ms"}),
    }


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
