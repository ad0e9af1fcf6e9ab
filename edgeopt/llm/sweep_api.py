"""The generative kind's ``sweep_api`` entry: :func:`edgeopt.sweep` on an LLM folder runs the LLM sweep
(:func:`edgeopt.llm.sweep.run_llm_sweep`) with the keywords that apply to it, as ``edgeopt sweep LLM_DIR`` does."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..registry import KindDescriptor
from ..sweep.request import SweepRequest
from .retention import RetentionSettings
from .sweep import LlmSweepOptions, bench_cell, run_llm_sweep
from .sweep_result import LlmSweepResult


def sweep_generative(model: Path, kind: KindDescriptor, r: SweepRequest) -> LlmSweepResult:
    """The LLM sweep of ``model``: ``eval`` the held-out text, ``recipes`` the level names, ``threads`` and
    ``eval_limit`` the scoring settings (the CLI's mapping, edgeopt/llm/cli/sweep.py).

    Raises:
        InputError: a metric given as a MetricSpec (an LLM sweep's metric is a name: agreement, kl, ...), or what
            the LLM sweep refuses (exit 2). RunnerError: the agent or a runtime failed (exit 3).
    """
    o, threads = r.options, r.measure.threads
    if o.metric is not None and not isinstance(o.metric, str):
        raise InputError(f"metric={o.metric!r}: an LLM sweep's metric is a name (docs/llm.md, \"Retention\")")
    retention = RetentionSettings(threads=threads, **({"windows": o.eval_limit} if o.eval_limit else {}))
    opts = LlmSweepOptions(eval_text=Path(o.eval_data), min_retention=o.min_retention, metric=o.metric,
                           levels=o.recipes, runtimes=o.runtimes, out_dir=o.out_dir, retention=retention,
                           workload=bench_cell(threads), calib_text=o.calib, history_db=o.history_db)
    progress = r.progress
    say = (lambda text: progress({"event": "log", "message": text})) if progress is not None else None
    return run_llm_sweep(model, opts, target=r.target, runner=r.runner, remote=r.remote, say=say)
