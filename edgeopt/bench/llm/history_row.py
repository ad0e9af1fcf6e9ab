"""The generative kind's ``history_row`` and stored-result reader: how an LLM bench result (``edgeopt bench
LLM_FOLDER``) fills a row of the history's ``runs`` table, and how that row's ``result_json`` reads back.

The version-1 columns, made for one forward pass, take the **first cell** that has a TPOT median so that
``edgeopt history`` lists the run beside the others: ``latency_ms_p50/p99/mean`` = TPOT (per output token),
``throughput_ips`` = decode tokens/s, ``memory_mb_peak`` = the highest peak RSS of any cell, ``energy_mj`` = decode
energy per output token. Every cell with its raw readings (TTFT per repetition, every token latency) is in the
stored result (``result_json``) and, as cells of metric series, in the history's cells tables, which ``edgeopt
compare`` reads. The model is the folder, hashed over its files.
"""

from __future__ import annotations

from pathlib import Path

from ... import jsonio
from ..._version import __version__
from ...history.bench_runs import RESULT_MAX_BYTES, RunFacts
from ...registry.lookup import model_digest
from .result import LlmBenchResult


def llm_facts(result: LlmBenchResult) -> RunFacts:
    """The ``runs`` row facts of ``result`` (no raw-sample blob: the readings travel inside ``result_json``)."""
    digest, size = model_digest(Path(result.model_path), result.model_format)
    first = next((c for c in result.cells if c.tpot_ms_p50 is not None), None)
    peaks = [c.peak_rss_mb for c in result.cells if c.peak_rss_mb is not None]
    return RunFacts(
        model_name=Path(result.model_path).name, model_path=result.model_path, model_sha256=digest,
        model_size_bytes=size, target=result.target, runner=result.runner,
        runtime=str(result.runtime.get("name")), runtime_version=str(result.runtime.get("version")),
        edgeopt_version=__version__, valid=result.valid, started_at=None,
        latency_ms=(first.tpot_ms_p50, first.tpot_ms_p99 or 0.0, first.tpot_ms_mean or 0.0) if first else
        (0.0, 0.0, 0.0),
        throughput_ips=(first.decode_tokens_per_s or 0.0) if first else 0.0,
        memory_mb_peak=max(peaks) if peaks else None,
        energy_mj=first.energy_decode_mj_per_token if first else None,
        energy_source=first.energy_source if first else None, seed=result.workload.seed,
        settings_json=result.workload.model_dump_json(), environment=dict(result.environment),
        result_json=result.model_dump_json())


def llm_result_of(text: str) -> LlmBenchResult:
    """A stored ``result_json`` of an LLM bench run as the result it holds (every cell's raw readings)."""
    return jsonio.validate(LlmBenchResult, text, max_bytes=RESULT_MAX_BYTES)
