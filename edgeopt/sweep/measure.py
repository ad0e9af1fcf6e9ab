"""Measure one artifact on the target: latency (benchmark) and retention (eval outputs on the device)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from ..bench import run_benchmark
from ..evaluation import Metric, OutputSelection, device_outputs, retention
from ..fsutil import sha256_file
from ..metrics.result import BenchResult, MemoryMb
from ..runners import Runner
from ..settings import MeasureSettings
from .result import Level

# Other processes' CPU use during a timed phase (% of the machine's cores) from which a level is flagged as measured
# under interference: on 2 cores, half a core busy elsewhere; a runtime given every core slows down ~2x when one
# other process keeps one core busy (docs/sweep.md "How latencies are measured").
INTERFERENCE_PCT = 25.0
# Minimum warm-up of a first pass in the served agent, s: as the confirmation rounds' (.confirm.RUN_WARMUP_S), whose
# median it is compared with; OpenVINO's bf16/AMX kernels read slow after a few inferences.
FIRST_PASS_WARMUP_S = 0.2
# A level row's benchmark fields before its benchmark (:func:`complete` replaces every one): a deferred level
# (``Context.level(defer=True)``) carries them until its first rounds; none is read before that.
PLACEHOLDER: dict[str, Any] = {"size_bytes": 0, "latency_ms": 0.0, "latency_ms_p99": 0.0, "memory_mb_peak": None,
                               "energy_mj": None, "energy_source": None, "meets_budget": True, "passed": False,
                               "valid": False, "single_run": True}


@dataclass
class Context:
    """Everything a level measurement needs; built once per sweep.

    Attributes:
        measure: benchmark settings of every level (the runtime is filled in per level; the shapes are one eval
            sample's, batch 1; the FPS budget is the sweep's, never the target's default).
        runtime_options: options every level on a runtime runs with unless the level says otherwise (OpenVINO:
            ``inference_precision: f32``, so "fp32" is FP32 and not the CPU's BF16 default); the reference too.
        refs: reference outputs per runtime (the original model's, measured once).
        bench_results: every fresh level with its benchmark (for the history).
        served: while the sweep holds one, a runner answering from one long-lived agent process
            (:mod:`edgeopt.runners.served`): evaluations, profiles, each level's first pass and the
            confirmation/ranking rounds go there (one process, so the first pass and the rounds that confirm it
            are measured alike); a level's memory and cold start, which a shared process cannot give, come from a
            short fresh agent afterwards, for the levels that need them (:mod:`.memory_probe`).
    """

    target: str
    runner: Runner
    eval_npz: Path
    labels: np.ndarray | None
    metric: Metric
    selection: OutputSelection
    min_retention: float
    measure: MeasureSettings
    targets_dirs: Sequence[Path]
    versions: dict[str, str]
    runtime_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    refs: dict[str, tuple[list[np.ndarray], list[str]]] = field(default_factory=dict)
    bench_results: list[tuple[Level, BenchResult]] = field(default_factory=list)
    served: Runner | None = None
    scores: dict[tuple[str, ...], tuple[float, float]] = field(default_factory=dict)

    @property
    def serving(self) -> bool:
        """Whether requests to :attr:`served` go to one served agent now (False without one, or after the agent
        there could not serve and the runner went one-shot: runners.served.ServedRunner.serving)."""
        return self.served is not None and bool(getattr(self.served, "serving", True))

    @property
    def agent_label(self) -> str:
        """``first_pass_agent`` of a level measured now: 'served' (on the served agent) or 'fresh' (a one-shot
        agent process: no served agent, or it fell back to one-shot runs)."""
        return "served" if self.serving else "fresh"

    @property
    def warm_runner(self) -> Runner:
        """The runner of evaluations, profiles and repeated rounds: the served agent when there is one."""
        return self.served or self.runner

    def options(self, runtime: str, override: dict[str, Any] | None = None) -> dict[str, Any]:
        """The runtime options of a level on ``runtime``: the sweep's for it, with ``override`` on top (a None value
        removes the option: the runtime's default)."""
        merged = {**self.runtime_options.get(runtime, {}), **(override or {})}
        return {k: v for k, v in merged.items() if v is not None}

    def reference(self, model: Path, runtime: str) -> tuple[list[np.ndarray], list[str]]:
        """The original model's outputs on ``runtime`` with the sweep's options for it (measured once)."""
        if runtime not in self.refs:
            outs, names, _ = device_outputs(model, self.eval_npz, runtime=runtime, runner=self.warm_runner,
                                            runtime_options=self.options(runtime), threads=self.measure.threads)
            self.refs[runtime] = (outs, names)
        return self.refs[runtime]

    def accuracy(self, artifact: Path, runtime: str, reference: Path,
                 options: dict[str, Any] | None = None) -> tuple[float, float]:
        """(metric value, retention) of ``artifact`` on ``runtime`` vs the reference model on the same runtime; a
        self-contained ONNX file whose bytes were scored before with the same options is not evaluated again (the
        INT8 search writes its chosen float set to the trial's own file after evaluating it), nor is the reference
        model with the reference's options (its outputs are the reference)."""
        key = score_key(artifact, runtime, reference, self.options(runtime, options))
        if key is not None and key in self.scores:
            return self.scores[key]
        ref_outs, ref_names = self.reference(reference, runtime)
        if artifact == reference and self.options(runtime, options) == self.options(runtime):
            outs, names = ref_outs, ref_names  # the reference itself (the fp32 level): its outputs are the reference
        else:
            outs, names, _ = device_outputs(artifact, self.eval_npz, runtime=runtime, runner=self.warm_runner,
                                            runtime_options=self.options(runtime, options),
                                            threads=self.measure.threads)
        ref = self.selection.pick(ref_outs, ref_names)
        out = self.selection.pick(outs, names)
        score = retention(self.metric, ref, out.astype(ref.dtype, copy=False), self.labels)
        if key is not None:
            self.scores[key] = score
        return score

    def latency(self, artifact: Path, runtime: str, options: dict[str, Any] | None = None, *, fresh: bool = True,
                **settings: Any) -> BenchResult:
        """Benchmark ``artifact`` on ``runtime`` with the sweep's settings (``settings``: fields replaced);
        ``fresh``: in a fresh agent process (a first pass), else on :attr:`warm_runner` (a repeated round)."""
        measure = self.measure.replace(runtime=runtime, runtime_options=self.options(runtime, options), **settings)
        return run_benchmark(artifact, measure, target=self.target,
                             runner=self.runner if fresh else self.warm_runner, targets_dirs=self.targets_dirs)

    def level(self, artifact: Path, runtime: str, recipe: str, reference: Path,
              details: dict[str, Any] | None = None, options: dict[str, Any] | None = None, *,
              defer: bool = False) -> Level:
        """Evaluate and benchmark ``artifact`` (``options``: runtime options over the sweep's); the Level row.

        ``defer``: evaluate only; the level's latency comes from its first interleaved rounds
        (:func:`.confirm.confirm_levels`, which fills the row with :func:`bench_fields`); until then it is a
        placeholder (``latency_confirm_rounds`` 0, no first pass) that no decision may read. Only with a served
        agent (the rounds run there)."""
        value, ret = self.accuracy(artifact, runtime, reference, options)
        row: dict[str, Any] = dict(
            recipe=recipe, runtime=runtime, runtime_version=self.versions.get(runtime, ""), artifact=str(artifact),
            metric=self.metric.name, metric_value=value, retention=ret, meets_retention=ret >= self.min_retention,
            cached=False, no_change=bool((details or {}).get("no_change")),
            runtime_options=self.options(runtime, options), threads=self.measure.threads,
            details={"artifact_sha256": sha256_file(artifact), **(details or {}),
                     **({"runtime_options": options} if options else {}),
                     "effective_runtime_options": self.options(runtime, options)})
        if defer and self.served is not None:
            return Level(**row, **PLACEHOLDER, first_pass_agent=self.agent_label)
        fresh = self.served is None  # without a served agent the first pass is a fresh process: its memory is its own
        bench = self.latency(artifact, runtime, options, fresh=fresh, **first_pass_settings(self.measure, fresh))
        if not fresh:  # a served process's peak also holds the other models it keeps: not this level's
            bench = without_memory(bench)
        lvl = complete(Level(**row, **PLACEHOLDER), bench, fresh=fresh, agent=self.agent_label)
        self.bench_results.append((lvl, bench))
        return lvl


def complete(lvl: Level, bench: BenchResult, *, fresh: bool, agent: str, first_pass: bool = True) -> Level:
    """``lvl`` (its accuracy measured) with what ``bench`` says: size, latency, memory (a ``fresh`` process's
    only), energy, budget, validity and what the runtime reported; ``agent``: where it was measured
    (:attr:`Context.agent_label`); ``first_pass``: ``bench`` is one run (a single-run latency), else the pool of its
    first interleaved rounds (:mod:`.pooled`)."""
    meets_budget = bench.fps_budget.passed if bench.fps_budget is not None else True
    busy = others_cpu_pct(bench)
    return lvl.model_copy(update=dict(
        runtime_version=bench.runtime.version, size_bytes=bench.model.size_bytes, latency_ms=bench.latency_ms.p50,
        latency_ms_p99=bench.latency_ms.p99, memory_mb_peak=bench.memory_mb.peak,
        memory_source="first_pass" if fresh else None, cold_start_ms=bench.cold_start_ms.total if fresh else None,
        first_pass_agent=agent,
        energy_mj=bench.energy.energy_per_inference_mj if bench.energy else None,
        energy_source=bench.energy.source if bench.energy else None, meets_budget=meets_budget,
        passed=lvl.meets_retention and meets_budget, valid=bench.valid,
        latency_ms_first_pass=bench.latency_ms.p50 if first_pass else None, single_run=first_pass,
        host_cpu_busy_pct=busy, interference=interfered(busy),
        details={**lvl.details, **_static_shapes(bench), **_precision(bench), **_reported(bench)}))


def score_key(artifact: Path, runtime: str, reference: Path, options: dict[str, Any]) -> tuple[str, ...] | None:
    """What decides an evaluation's score: the model's bytes, runtime, reference and options; None where the bytes
    of one file are not the whole model (not ONNX, or weights in external data files)."""
    if artifact.suffix != ".onnx" or not artifact.is_file():
        return None
    m = onnx.load(str(artifact), load_external_data=False)
    if any(t.data_location == onnx.TensorProto.EXTERNAL for t in m.graph.initializer):
        return None
    return sha256_file(artifact), runtime, str(reference), json.dumps(options, sort_keys=True, default=str)


def first_pass_settings(measure: MeasureSettings, fresh: bool) -> dict[str, Any]:
    """Settings over the sweep's for a level's first pass: in the served agent (not ``fresh``) it warms up as the
    confirmation rounds do, for at least :data:`FIRST_PASS_WARMUP_S` (its model was just compiled there, and the
    rounds after it reuse that warm model)."""
    return {} if fresh else {"warmup_s": max(measure.warmup_s, FIRST_PASS_WARMUP_S)}


def without_memory(bench: BenchResult) -> BenchResult:
    """``bench`` with its memory unknown (what the history records for a level measured in the served agent)."""
    return bench.model_copy(update={"memory_mb": MemoryMb(baseline=None, peak=None, delta=None)})


def others_cpu_pct(bench: BenchResult) -> float | None:
    """Other processes' CPU use during ``bench``'s timed phase, % of the machine's cores (the agent's
    ``environment.cpu_during_timed``); None where the agent could not read it (no /proc/stat, an older agent)."""
    value = (bench.environment.get("cpu_during_timed") or {}).get("others_cpu_pct")
    return float(value) if isinstance(value, (int, float)) else None


def interfered(busy_pct: float | None) -> bool:
    """Whether other processes' CPU use reached :data:`INTERFERENCE_PCT` (unknown use is not flagged)."""
    return busy_pct is not None and busy_pct >= INTERFERENCE_PCT


def _precision(bench: BenchResult) -> dict[str, Any]:
    """The precision the runtime reports it ran float parts in (OpenVINO ``inference_precision``), when known."""
    value = (bench.runtime.model_extra or {}).get("inference_precision")
    return {"inference_precision": value} if value else {}


def _static_shapes(bench: BenchResult) -> dict[str, Any]:
    """What the runtime did about dynamic input dims (``runtime.static_shapes``; agents before it say nothing)."""
    info = (bench.runtime.model_extra or {}).get("static_shapes")
    return {"static_shapes": info} if info else {}


def _reported(bench: BenchResult) -> dict[str, Any]:
    """What the agent reported the runtime ran with (providers used, precision, performance hint, streams...): the
    deployment's ``runtime_reported``."""
    info = {k: v for k, v in (bench.runtime.model_extra or {}).items() if k != "static_shapes" and v is not None}
    return {"runtime_reported": info} if info else {}
