"""``edgeopt sweep LLM_DIR --eval TEXT``: quantization levels of a decoder LLM on both generative runtimes, each
scored against its runtime's FP32 export on a held-out text and benched on one small workload; the fastest decode
that keeps ``--min-retention`` is recommended and shipped as a deployment (docs/llm.md, "Retention and sweep").

The references are scored with every float computed in FP32 (OpenVINO: ``inference_precision: f32``, since its
CPU plugin runs FP32 in BF16 on AMX/AVX512_BF16 by default); every level, the FP32 export included, is scored and
benched with its runtime's defaults, as it would be deployed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._version import __version__
from ..bench.llm import bench_llm
from ..bench.llm.workload import LlmWorkload
from ..errors import InputError, first_line
from ..fsutil import atomic_write_text
from ..registry.lookup import detect_format, model_digest
from ..runners import AgentError, Runner
from ..runners.select import use_runner
from ..settings import RemoteSpec
from .folders import check_hf_folder
from .ort_genai_export import LlmExportError
from .retention import RetentionSettings, Scores, check_metric, compare, read_text, score_folder, vocab_covered
from .sweep_levels import REFERENCE, RUNTIMES, LlmLevel, build_level, select_levels
from .sweep_rank import recommend_llm, write_llm_plot
from .sweep_result import LlmSweepLevel, LlmSweepResult
from .sweep_ship import ship_llm

Say = Callable[[str], None]
# Options a reference is scored with, per runtime: every float in FP32.
REFERENCE_OPTIONS: dict[str, dict[str, Any]] = {"onnxruntime_genai": {},
                                                "openvino_genai": {"inference_precision": "f32"}}
MODULES = {"onnxruntime_genai": "onnxruntime_genai", "openvino_genai": "openvino_genai"}


@dataclass(frozen=True)
class LlmSweepOptions:
    """What to sweep and how (the CLI's flags)."""

    eval_text: Path
    min_retention: float = 0.9
    metric: str | None = None
    levels: list[str] | None = None
    runtimes: list[str] | None = None
    out_dir: Path | None = None
    retention: RetentionSettings = field(default_factory=RetentionSettings)
    workload: LlmWorkload = field(default_factory=lambda: bench_cell())


def bench_cell(threads: int = 0) -> LlmWorkload:
    """The one workload every level is benched on: prompt 32, gen 32 tokens, 3 repetitions after 1 warm-up."""
    return LlmWorkload(prompt_tokens=(32,), gen_tokens=(32,), threads=(threads,), repetitions=3, warmup=1)


def _runtimes(wanted: list[str] | None) -> list[str]:
    if wanted:
        return wanted
    found = [r for r in RUNTIMES if importlib.util.find_spec(MODULES[r]) is not None]
    if not found:
        raise InputError("neither onnxruntime-genai nor openvino-genai is installed: pip install 'edgeopt[llm,torch]'")
    return found


def _measure(level: LlmLevel, folder: Path, reused: bool, ref: Scores, opts: LlmSweepOptions, metric: str,
             runner: Runner) -> LlmSweepLevel:
    """Score ``folder`` against ``ref`` and bench it: one row of the result."""
    cand = score_folder(folder, read_text(opts.eval_text), opts.retention, runner, kl_ids=ref["kl_ids"])
    ret = compare(ref, cand, metric=metric, vocab_covered=vocab_covered(ref))
    bench = bench_llm(folder, opts.workload, runner=runner)
    cell = bench.cells[0]
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return LlmSweepLevel(
        name=level.name, runtime=level.runtime, folder=str(folder), settings=level.settings.model_dump(),
        reference=level.name == REFERENCE, size_bytes=size, reused=reused, retention=ret,
        passed=ret.retention >= opts.min_retention, runtime_version=str(bench.runtime.get("version", "")),
        decode_tokens_per_s=cell.decode_tokens_per_s, tpot_ms_p50=cell.tpot_ms_p50, ttft_ms_p50=cell.ttft_ms_p50,
        rank_tokens_per_s=1000.0 / cell.tpot_ms_p50 if cell.tpot_ms_p50 else None,
        peak_rss_mb=cell.peak_rss_mb, bench_valid=cell.valid, cpu=str(bench.environment.get("cpu") or ""))


def _sweep_runtime(runtime: str, levels: list[LlmLevel], src: Path, digest: str, out: Path, opts: LlmSweepOptions,
                   metric: str, runner: Runner, say: Say, warnings: list[str]) -> list[LlmSweepLevel]:
    """Every level of one runtime against its fp32 reference; a level the exporter or the runtime cannot handle is
    skipped with a warning in ``warnings`` (the reference's failure, or a lost device, ends the sweep)."""
    ref_level = next(lv for lv in levels if lv.name == REFERENCE)
    ref_folder, _ = build_level(ref_level, src, digest, out / "levels")
    say(f"{runtime}: scoring the fp32 reference")
    ref = score_folder(ref_folder, read_text(opts.eval_text), opts.retention, runner,
                       runtime_options=REFERENCE_OPTIONS[runtime])
    rows = []
    for level in levels:
        say(f"{level.key}: building")
        try:
            folder, reused = build_level(level, src, digest, out / "levels")
            say(f"{level.key}: scoring and benching")
            row = _measure(level, folder, reused, ref, opts, metric, runner)
        except (AgentError, LlmExportError) as exc:
            if level.name == REFERENCE:
                raise
            warnings.append(f"{level.key} skipped: {first_line(exc)}")
            say(f"{level.key}: skipped ({first_line(exc, limit=160)})")
            continue
        say(f"{level.key}: retention {row.retention.retention:.4f} ({metric}), TPOT p50 "
            f"{row.tpot_ms_p50 or 0:.3f} ms ({row.rank_tokens_per_s or 0:.1f} tok/s)")
        rows.append(row)
    return rows


def _source(model: Path) -> str:
    if not model.is_dir() or detect_format(model) != "hf_llm":
        raise InputError(f"{model} is not a Hugging Face decoder folder (config.json, *.safetensors, tokenizer): the "
                         "LLM sweep starts from the folder 'edgeopt optimize LLM_DIR' takes")
    check_hf_folder(model)
    return model_digest(model, "hf_llm")[0]


def run_llm_sweep(model: str | Path, opts: LlmSweepOptions, *, target: str | None = None, runner: Runner | None = None,
                  remote: RemoteSpec | None = None, say: Say | None = None) -> LlmSweepResult:
    """Build, score, bench every level of ``model``; recommend and ship the fastest passing one.

    Raises:
        InputError: a bad folder, text, metric, level or runtime name (exit 2).
        RunnerError: the agent or a runtime failed (exit 3).
    """
    start, say = time.monotonic(), say or (lambda _text: None)
    src = Path(model)
    metric = check_metric(opts.metric)
    text = read_text(opts.eval_text)
    digest = _source(src)
    runtimes = _runtimes(opts.runtimes)
    levels = select_levels(opts.levels, runtimes)
    out = Path(opts.out_dir) if opts.out_dir is not None else Path("out") / f"{src.name}.llm-sweep"
    out.mkdir(parents=True, exist_ok=True)
    rows: list[LlmSweepLevel] = []
    warnings: list[str] = []
    with use_runner(runner, remote, target) as placed:
        for runtime in runtimes:
            rows += _sweep_runtime(runtime, [lv for lv in levels if lv.runtime == runtime], src, digest, out, opts,
                                   metric, placed.runner, say, warnings)
        runner_name, target_name = placed.runner.name, placed.target or "local"
    rec, constraint, front = recommend_llm(rows, opts.min_retention, metric)
    plot = write_llm_plot(rows, out / "pareto.svg", opts.min_retention, rec)
    result = LlmSweepResult(
        edgeopt_version=__version__, model=str(src.resolve()), model_sha256=digest, target=target_name,
        runner=runner_name, eval_text=str(opts.eval_text), eval_text_sha256=hashlib.sha256(text.encode()).hexdigest(),
        metric=metric, min_retention=opts.min_retention, retention_settings=opts.retention,
        workload=opts.workload.request_dict(), levels=rows, pareto=front, recommendation=rec,
        binding_constraint=constraint, plot=str(plot), out_dir=str(out), seconds=0.0,
        cpu=rows[0].cpu if rows else "", warnings=warnings)
    result = ship_llm(result, out)
    result = result.model_copy(update={"seconds": round(time.monotonic() - start, 3)})
    atomic_write_text(out / "sweep.json", json.dumps(result.model_dump(mode="json"), indent=2) + "\n")
    return result
