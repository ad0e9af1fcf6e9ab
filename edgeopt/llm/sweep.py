"""``edgeopt sweep LLM_DIR --eval TEXT``: quantization levels of a decoder LLM on both generative runtimes, each
scored against its runtime's FP32 export on a held-out text and benched on one small workload; the fastest decode
that keeps ``--min-retention`` is recommended, shipped as a deployment and re-scored from its files alone
(:mod:`.sweep_check`; docs/llm.md, "Retention and sweep", "Shipped check").

The sweep is the one flow of every kind (:func:`edgeopt.sweep.flow.run_sweep_flow`) with this kind's plan,
:class:`LlmSweep`: the levels are built first (:mod:`.sweep_build`), then measured through one runner
(:func:`measure_levels`), recommended and charted, shipped and re-checked; the flow records the
history and writes ``sweep.json``. A fleet sweep (:mod:`.sweep_fleet`) builds once and runs the measuring and
shipping steps on each device (:func:`edgeopt.sweep.flow.measure_on` of the same plan), then records the history
on the host.

The references are scored with every float computed in FP32 (OpenVINO: ``inference_precision: f32``, since its
CPU plugin runs FP32 in BF16 on AMX/AVX512_BF16 by default); every level, the FP32 export included, is scored and
benched with its runtime's defaults, as it would be deployed.
"""

from __future__ import annotations

import json
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .._version import __version__
from ..bench.llm import bench_llm
from ..deploy import decision_cpu_flags
from ..deploy.options import measured_options
from ..registry import get_runtime
from ..runners import AgentError, Runner
from ..settings import RemoteSpec
from ..sweep.flow import Placement, run_sweep_flow
from .retention import Scores, compare, read_text, score_folder, vocab_covered
from .sweep_build import LlmBuild, Say, prepare_llm_sweep, skip_level
from .sweep_check import LlmShipCheck
from .sweep_levels import REFERENCE, LlmLevel
from .sweep_options import LlmSweepOptions, bench_cell
from .sweep_rank import recommend_llm, write_llm_plot
from .sweep_result import LlmSweepLevel, LlmSweepResult
from .sweep_rounds import rank_in_rounds
from .sweep_ship import ship_llm

if TYPE_CHECKING:
    from ..bench.llm.result import LlmBenchResult
    from ..history.sweep_runs import SweptLevel

__all__ = ["LlmLevelRuns", "LlmSweep", "LlmSweepOptions", "bench_cell", "dump_llm_sweep",
           "llm_swept_levels", "measure_levels", "run_llm_sweep"]

# A measured level's row with its bench result (the history records the latter), and every level's.
LlmLevelRun = tuple[LlmSweepLevel, "LlmBenchResult"]
LlmLevelRuns = list[LlmLevelRun]


def _measure(level: LlmLevel, folder: Path, reused: bool, ref: Scores, text: str, opts: LlmSweepOptions,
             metric: str, runner: Runner) -> LlmLevelRun:
    """Score ``folder`` against ``ref`` and bench it: one row of the result, with its bench (the history's)."""
    cand = score_folder(folder, text, opts.retention, runner, kl_ids=ref["kl_ids"])
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
        peak_rss_mb=cell.peak_rss_mb, bench_valid=cell.valid, cpu=str(bench.environment.get("cpu") or ""),
        runtime_options=measured_options(level.runtime, bench.runtime),
        cpu_flags=decision_cpu_flags(bench.environment.get("cpu_flags") or [])), bench


def _sweep_runtime(runtime: str, build: LlmBuild, text: str, root: Path | None, opts: LlmSweepOptions,
                   runner: Runner, say: Say, warnings: list[str], references: dict[str, Scores]) -> LlmLevelRuns:
    """Every built level of one runtime against its fp32 reference (its scores go into ``references``); a level
    the runtime cannot run is skipped with a warning in ``warnings`` (the reference's failure, or a lost device,
    ends the sweep)."""
    levels = [lv for lv in build.levels if lv.runtime == runtime]
    ref_level = next(lv for lv in levels if lv.name == REFERENCE)
    say(f"{runtime}: scoring the fp32 reference")
    ref = score_folder(build.folder(ref_level, root), text, opts.retention, runner,
                       runtime_options=dict(get_runtime(runtime).reference_options))
    references[runtime] = ref
    rows: LlmLevelRuns = []
    for level in levels:
        say(f"{level.key}: scoring and benching")
        try:
            row, bench = _measure(level, build.folder(level, root), build.reused.get(level.key, False), ref, text,
                                  opts, build.metric, runner)
        except AgentError as exc:
            skip_level(level, exc, warnings, say)
            continue
        say(f"{level.key}: retention {row.retention.retention:.4f} ({build.metric}), TPOT p50 "
            f"{row.tpot_ms_p50 or 0:.3f} ms ({row.rank_tokens_per_s or 0:.1f} tok/s)")
        rows.append((row, bench))
    return rows


def measure_levels(build: LlmBuild, opts: LlmSweepOptions, runner: Runner, *, say: Say, warnings: list[str],
                   root: Path | None = None, eval_text: Path | None = None,
                   references: dict[str, Scores] | None = None) -> LlmLevelRuns:
    """Score and bench every built level through ``runner``, runtime by runtime: each level's row with its bench
    result.

    Args:
        root: where the built levels are on this worker (None: ``build.levels_dir``).
        eval_text: where the eval text is on this worker (None: ``opts.eval_text``).
        references: filled with each runtime's FP32 reference scores (the shipped check re-scores against them).
    """
    text = read_text(eval_text if eval_text is not None else opts.eval_text)
    refs = references if references is not None else {}
    runs: LlmLevelRuns = []
    for runtime in build.runtimes:
        runs += _sweep_runtime(runtime, build, text, root, opts, runner, say, warnings, refs)
    threads = opts.workload.threads[0] if len(opts.workload.threads) == 1 else 0
    rows = rank_in_rounds([row for row, _ in runs], runner, threads=threads, rounds=opts.rank_rounds, say=say,
                          warnings=warnings)
    return [(row, bench) for row, (_, bench) in zip(rows, runs, strict=True)]


def dump_llm_sweep(result: LlmSweepResult) -> str:
    """``sweep.json``'s text."""
    return json.dumps(result.model_dump(mode="json"), indent=2) + "\n"


def llm_swept_levels(runs: LlmLevelRuns) -> list[SweptLevel]:
    """The measured levels as the history keeps them (``name@runtime``, retention, verdict, bench)."""
    from ..history.sweep_runs import SweptLevel

    return [SweptLevel(f"{row.name}@{row.runtime}", row.retention.retention, row.passed, bench) for row, bench in runs]


@dataclass(frozen=True)
class _Measured:
    """The LLM sweep between its steps: every level's row and bench, the warnings so far, the reference scores
    and the runner they were scored through (the shipped check re-scores with them), the start time."""

    runs: LlmLevelRuns
    warnings: list[str]
    references: dict[str, Scores]
    placed: Placement
    started: float


@dataclass
class LlmSweep:
    """The generative kind's :class:`~edgeopt.sweep.flow.SweepPlan`: the levels built first (``prepare``), then
    scored against their runtime's FP32 reference and benched, ranked in interleaved rounds, recommended, charted,
    shipped and re-scored from the shipped files through the same runner."""

    src: Path
    opts: LlmSweepOptions
    out: Path
    say: Say
    started: float = field(default_factory=time.monotonic)
    build: LlmBuild | None = None  # the levels, built by prepare() (a fleet device: the host's, already built)
    root: Path | None = None  # where the built levels are on this worker (None: ``build.levels_dir``)
    eval_text: Path | None = None  # where the eval text is on this worker (None: ``opts.eval_text``)
    runner_name: str | None = None  # the result's ``runner`` (None: the placed runner's name)

    @property
    def history_db(self) -> str | Path | None:
        return self.opts.history_db

    def built(self) -> LlmBuild:
        """The levels: built into ``<out>/levels`` on first use (a fleet device is handed the host's)."""
        if self.build is None:
            self.build = prepare_llm_sweep(self.src, self.opts, self.out / "levels", self.say)
        return self.build

    def prepare(self) -> None:
        self.built()

    def session(self, runner: Runner) -> AbstractContextManager[Runner]:
        return nullcontext(runner)  # each score and bench is a fresh agent process

    def measure(self, placed: Placement) -> _Measured:
        build = self.built()
        warnings = list(build.warnings)
        references: dict[str, Scores] = {}
        runs = measure_levels(build, self.opts, placed.served, say=self.say, warnings=warnings, root=self.root,
                              eval_text=self.eval_text, references=references)
        return _Measured(runs, warnings, references, placed, self.started)

    def recommend(self, measured: _Measured) -> LlmSweepResult:
        build, opts, p = self.built(), self.opts, measured.placed
        self.out.mkdir(parents=True, exist_ok=True)
        rows = [row for row, _ in measured.runs]
        rec, constraint, front = recommend_llm(rows, opts.min_retention, build.metric)
        plot = write_llm_plot(rows, self.out / "pareto.svg", opts.min_retention, rec)
        return LlmSweepResult(
            edgeopt_version=__version__, model=str(build.src.resolve()), model_sha256=build.digest,
            target=p.target or "local", runner=self.runner_name or p.runner.name, eval_text=str(build.eval_text),
            eval_text_sha256=build.eval_sha256, metric=build.metric, min_retention=opts.min_retention,
            retention_settings=opts.retention, workload=opts.workload.request_dict(), levels=rows, pareto=front,
            recommendation=rec, binding_constraint=constraint, plot=str(plot), out_dir=str(self.out), seconds=0.0,
            cpu=rows[0].cpu if rows else "", warnings=measured.warnings)

    def ship(self, measured: _Measured, result: LlmSweepResult, placed: Placement) -> LlmSweepResult:
        # the shipped folder is re-scored through the same runner, against the same reference scores
        text = read_text(self.eval_text if self.eval_text is not None else self.opts.eval_text)
        check = LlmShipCheck(placed.served, measured.references, text, self.opts.retention)
        result = ship_llm(result, self.out, device=placed.device, check=check)
        return result.model_copy(update={"seconds": round(time.monotonic() - measured.started, 3)})

    def history(self, measured: _Measured, device: str | None) -> tuple[list[SweptLevel], str | None]:
        return llm_swept_levels(measured.runs), device

    def dump(self, result: LlmSweepResult) -> str:
        return dump_llm_sweep(result)


def run_llm_sweep(model: str | Path, opts: LlmSweepOptions, *, target: str | None = None, runner: Runner | None = None,
                  remote: RemoteSpec | None = None, say: Say | None = None) -> LlmSweepResult:
    """Build, score, bench every level of ``model``; recommend and ship the fastest passing one
    (:func:`edgeopt.sweep.flow.run_sweep_flow` of :class:`LlmSweep`).

    Raises:
        InputError: a bad folder, text, calibration text, metric, level or runtime name (exit 2).
        RunnerError: the agent or a runtime failed (exit 3).
    """
    src = Path(model)
    out = Path(opts.out_dir) if opts.out_dir is not None else Path("out") / f"{src.name}.llm-sweep"
    plan = LlmSweep(src, opts, out, say or (lambda _text: None))
    return run_sweep_flow(plan, runner=runner, remote=remote, target=target)
