"""The LLM sweep's options (the CLI's flags) and the one bench cell every level runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from ..bench.llm.workload import LlmWorkload
from ..registry.flag_spec import Flag
from .retention import RetentionSettings


def bench_cell(threads: int = 0) -> LlmWorkload:
    """The one workload every level is benched on: prompt 32, gen 32 tokens, 3 repetitions after 1 warm-up."""
    return LlmWorkload(prompt_tokens=(32,), gen_tokens=(32,), threads=(threads,), repetitions=3, warmup=1,
                       kv_probe=False)


@dataclass(frozen=True)
class LlmSweepOptions:
    """What to sweep and how (the CLI's flags).

    Attributes:
        eval_text: the held-out text every level is scored on.
        calib_text: calibration text for the data-aware level ``int4-awq`` (None: that level is not tried). Never
            the eval text: a level calibrated on the held-out data would score on what it was fitted to.
        rank_rounds: interleaved rounds the passing levels are ranked in (0: rank on the single bench cells).
        history_db: record every measured level (its LLM bench result) in this history store as a run of kind
            ``sweep`` (None: not recorded).
    """

    eval_text: Path
    min_retention: float = 0.9
    metric: str | None = None
    levels: Annotated[list[str] | None, Flag(  # a flag of `edgeopt sweep` (edgeopt/cli/kind_flags.py)
        "--levels", "LLM folders: comma-separated levels (default all; docs/llm.md).")] = None
    runtimes: list[str] | None = None
    out_dir: Path | None = None
    retention: RetentionSettings = field(default_factory=RetentionSettings)
    workload: LlmWorkload = field(default_factory=lambda: bench_cell())
    calib_text: Path | None = None
    history_db: Path | None = None
    rank_rounds: int = 5  # interleaved ranking rounds of the passing levels (edgeopt.llm.sweep_rounds; 0: none)
