"""How an LLM bench result (``edgeopt bench LLM_FOLDER``) fills a row of the history's ``runs`` table.

The table's columns were made for one forward pass; an LLM run fills them from its **first cell** so that
``edgeopt history`` lists it beside the others: ``latency_ms_p50/p99/mean`` = TPOT (per output token),
``throughput_ips`` = decode tokens/s, ``memory_mb_peak`` = the highest peak RSS of any cell, ``energy_mj`` = decode
energy per output token. Every cell with its raw readings (TTFT per repetition, every token latency) is in the
stored result (``result_json``) and, as cells of metric series, in the cells tables (:mod:`.cells_rows`), which
``edgeopt compare`` reads. The model is the folder, hashed over its files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import jsonio
from ..registry.lookup import model_digest
from .bench_runs import RESULT_MAX_BYTES

if TYPE_CHECKING:  # bench.llm pulls in the bench package (onnx): imported in the function that reads a run
    from ..bench.llm.result import LlmBenchResult

def llm_values(result: LlmBenchResult, *, kind: str, device: str, verdict: str | None, group_id: str | None,
               label: str | None, now: str) -> dict[str, Any]:
    """The ``runs`` row of ``result`` (no raw-sample blob: the readings travel inside ``result_json``)."""
    digest, size = model_digest(Path(result.model_path), result.model_format)
    first = next((c for c in result.cells if c.tpot_ms_p50 is not None), None)
    peaks = [c.peak_rss_mb for c in result.cells if c.peak_rss_mb is not None]
    env = dict(result.environment)
    name, version = str(result.runtime.get("name")), str(result.runtime.get("version"))
    return {
        "kind": kind, "created_at": now, "started_at": None, "model_name": Path(result.model_path).name,
        "model_path": result.model_path, "model_sha256": digest, "model_size_bytes": size, "target": result.target,
        "device": device, "runner": result.runner, "runtime": name, "runtime_version": version,
        "edgeopt_version": _edgeopt_version(), "valid": int(result.valid), "verdict": verdict,
        "latency_ms_p50": first.tpot_ms_p50 if first else 0.0,
        "latency_ms_p99": (first.tpot_ms_p99 or 0.0) if first else 0.0,
        "latency_ms_mean": (first.tpot_ms_mean or 0.0) if first else 0.0,
        "throughput_ips": (first.decode_tokens_per_s or 0.0) if first else 0.0,
        "memory_mb_peak": max(peaks) if peaks else None,
        "energy_mj": first.energy_decode_mj_per_token if first else None,
        "energy_source": first.energy_source if first else None,
        "samples_count": 0, "samples_format": None, "samples": None, "group_id": group_id, "label": label,
        "seed": result.workload.seed, "settings_json": result.workload.model_dump_json(),
        "environment_json": json.dumps(env, default=str),
        "versions_json": json.dumps({"edgeopt": _edgeopt_version(), name: version, "python": env.get("python"),
                                     "numpy": env.get("numpy")}, default=str),
        "result_json": result.model_dump_json(),
    }


def _edgeopt_version() -> str:
    from .._version import __version__

    return __version__


def llm_result_of(text: str) -> LlmBenchResult:
    """A stored ``result_json`` of an LLM bench run as the result it holds (every cell's raw readings)."""
    from ..bench.llm.result import LlmBenchResult  # the bench package (onnx) loads only when an LLM run is read

    return jsonio.validate(LlmBenchResult, text, max_bytes=RESULT_MAX_BYTES)
