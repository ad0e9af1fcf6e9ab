"""The qualification engine's entry, and the tensor kind's plan: a one-pass model measured on each device.

:func:`run_qualification` asks the registry the spec model's kind and calls the kind's ``qualify`` entry; every
kind's entry runs the one flow of :mod:`.flow`. The tensor kind's entry (:func:`run_tensor_qualification`) builds
its plan on the host: the model (a file, a zoo model, a deployment's file with its settings), the recipe's output
per target, retention (when gated); each device makes a timed run (raw samples kept) and, with a deadline_miss
gate, a frame-paced run; the one-pass gates judge them, with the baseline comparison (regression gate) and the
energy costs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..deploy.use import DeploymentUse
from ..dispatch import entry
from ..errors import InputError
from ..fleet.jobs import EventSink
from ..history import HistoryError, HistoryStore, compare_samples
from ..history.identity import RunIdentity, blocking_notes, comparability_notes
from ..history.noise_floor import noise_floor
from ..metrics.deadline import frames_required
from ..metrics.latency import PERCENTILES, required_samples
from ..metrics.result import BenchResult
from ..registry import KindDescriptor
from ..runners import Runner
from ..settings import EnergySettings, MeasureSettings
from .artifacts import Models, prepare, qualified_for, sha_of
from .costs import cost_per_million
from .device_jobs import Measurement, log
from .flow import (
    KindPlan,
    Start,
    deployed_measure,
    fingerprint,
    model_info,
    per_target,
    qualify_flow,
)
from .gate_spec import Gates
from .gates import GateContext, evaluate
from .kind_check import spec_kind
from .loader import LoadedSpec
from .options import QualifyOptions
from .outcome import default_report_dir, host_facts
from .placement import Placement
from .result import GateResult, ModelInfo, QualifyResult, RegressionInfo, RetentionResult
from .retention import HostOnnxEvaluator, RetentionEvaluator
from .spec import QualifySpec

__all__ = ["default_report_dir", "run_qualification", "run_tensor_qualification"]

DEFAULT_ITERATIONS = 200


def run_qualification(loaded: LoadedSpec, options: QualifyOptions | None = None) -> QualifyResult:
    """Measure the loaded spec's model on each of its devices, in parallel, and judge it against its gates.

    Reports and sinks are the caller's (``edgeopt.qualify`` in :mod:`edgeopt.api` writes them): the result's
    ``reports`` is empty here. ``options``: as :func:`edgeopt.qualify`'s keywords (default: its defaults).

    Raises:
        QualifySpecError / InputError: invalid spec, model, data or history path (exit code 2), before any
            device work where it can be known then.
    """
    o = options or QualifyOptions()
    kind = spec_kind(loaded.spec, loaded.resolve)  # the registry's answer; the kind's qualify entry measures it
    result: QualifyResult = entry(kind, "qualify")(loaded, kind, o)
    return result


def run_tensor_qualification(loaded: LoadedSpec, kind: KindDescriptor, o: QualifyOptions) -> QualifyResult:
    """The tensor kind's ``qualify`` entry: a one-pass model's timed (and frame-paced) runs per device, judged by
    the one-pass gates (arguments and errors as :func:`run_qualification`'s)."""
    return qualify_flow(loaded, o, lambda start: _plan(start, o.evaluator or HostOnnxEvaluator()))


def _plan(start: Start, evaluator: RetentionEvaluator) -> TensorPlan:
    """The model qualified for each placement, retention per target (when gated) and a deployment's settings, on
    the host: everything that can fail there (recipes, eval data, a conflicting setting) fails before any run."""
    loaded, say, work = start.loaded, start.say, start.work
    s = loaded.spec
    models = prepare(loaded, work, say)

    def retention_of(model: Path) -> RetentionResult:
        say(f"retention of {model.name} vs {models.reference.name} on the host")
        return evaluator.evaluate(
            models.reference, model, data=loaded.resolve(s.eval.data) if s.eval.data else None,
            samples=s.eval.samples, metric=s.eval.metric_spec(), shapes=s.model.shapes, seed=s.measure.seed,
            **({"output": s.eval.output} if s.eval.output is not None else {}))

    qualified, _, retention = per_target(start, lambda target: qualified_for(models, loaded, target, work, say),
                                         retention_of if s.gates.retention is not None else None)
    timed, paced = _measure_settings(s)
    if models.deployment is not None:  # exactly the deployment's settings (docs/qualify.md, "Deployments")
        timed, paced = _deployed(loaded, models.deployment, timed, paced)
    info = _model_info(models)
    return TensorPlan(qualified=qualified, model=info, fingerprint=_fingerprint(loaded, info),
                      retention=retention, deployment=models.deployment, runs_per_device=2 if paced else 1,
                      loaded=loaded, measure=OnePassMeasurement(timed, paced))


@dataclass(frozen=True)
class OnePassMeasurement(Measurement):
    """A one-pass model's timed run (raw samples kept) and, with a deadline_miss gate, its frame-paced run."""

    timed: MeasureSettings
    paced: MeasureSettings | None

    def __call__(self, runner: Runner, model: Path, p: Placement, progress: EventSink | None,
                 targets_dirs: Sequence[Path]) -> tuple[Any, ...]:
        from ..bench import run_benchmark  # the heavy stack loads on the worker, once

        log(progress, f"{p.label}: timed run of {model.name} on {p.target} ({p.runner_name})")
        bench = run_benchmark(model, self.timed, target=p.target, runner=runner, progress=progress,
                              targets_dirs=targets_dirs)
        if self.paced is None:
            return (bench,)
        log(progress, f"{p.label}: frame-paced run, {self.paced.iterations} frames at "
                      f"{self.paced.pacing_fps or 0:g} FPS")
        return bench, run_benchmark(model, self.paced, target=p.target, runner=runner, progress=progress,
                                    targets_dirs=targets_dirs)


@dataclass(kw_only=True)
class TensorPlan(KindPlan):
    """The tensor kind's plan: the one-pass gates on its timed (and frame-paced) runs, costs and the baseline
    comparison."""

    loaded: LoadedSpec

    def judge(self, p: Placement, runs: tuple[Any, ...], retention: RetentionResult | None,
              store: HistoryStore | None, warnings: list[str]) -> tuple[list[GateResult], dict[str, Any]]:
        s = self.loaded.spec
        bench: BenchResult = runs[0]
        paced: BenchResult | None = runs[1] if len(runs) > 1 else None
        regression = _regression(s.gates, p.label, bench, store, warnings)
        ctx = GateContext(device=p.label, bench=bench, paced=paced, retention=retention, regression=regression)
        costs = None
        if bench.energy is not None and bench.energy.energy_per_inference_mj is not None:
            costs = cost_per_million(bench.energy.energy_per_inference_mj, source=bench.energy.source,
                                     settings=s.costs)
        return evaluate(s.gates, ctx), {
            "bench": bench, "paced": paced.model_copy(update={"samples_ms": None}) if paced else None,
            "costs": costs, "regression": regression}


def _deployed(loaded: LoadedSpec, use: DeploymentUse, timed: MeasureSettings, paced: MeasureSettings | None,
              ) -> tuple[MeasureSettings, MeasureSettings | None]:
    """The runs' settings with the deployment's (:func:`.flow.deployed_measure`): a spec key set explicitly must
    agree unless override_deployment.

    Raises:
        QualifySpecError: a measure key (or model.shapes) that contradicts the deployment (exit 2).
    """
    timed = deployed_measure(loaded, use, timed)
    return timed, deployed_measure(loaded, use, paced).replace(streams=1) if paced is not None else None


def _bench_settings(gates: Gates, iterations: int | None) -> tuple[str, int]:
    """The percentile the timed run is judged on (the highest gated one) and its minimum iterations."""
    keys = [g.percentile for g in (gates.latency, gates.fps) if g is not None] or ["p99"]
    top = max(keys, key=lambda k: PERCENTILES[k])
    return top, iterations or max(DEFAULT_ITERATIONS, required_samples(PERCENTILES[top]))


def _measure_settings(s: QualifySpec) -> tuple[MeasureSettings, MeasureSettings | None]:
    """The timed run's settings (raw samples kept) and the frame-paced run's (None without a deadline_miss gate)."""
    m = s.measure
    percentile, iterations = _bench_settings(s.gates, m.iterations)
    common = MeasureSettings(warmup=m.warmup, warmup_s=m.warmup_s, threads=m.threads, batch=m.batch, seed=m.seed,
                             shapes=s.model.shapes, runtime=m.runtime, use_target_fps=False,
                             max_duration_s=m.max_duration_s)
    timed = common.replace(percentile=percentile, iterations=iterations, min_duration_s=m.min_duration_s,
                           streams=m.streams, keep_samples=True,
                           energy=EnergySettings(enabled=m.energy, sensor=m.power_sensor))
    g = s.gates.deadline_miss
    if g is None:
        return timed, None
    paced = common.replace(percentile="p50", iterations=g.frames or frames_required(g.max_pct), min_duration_s=0.0,
                           pacing_fps=g.fps, energy=EnergySettings(enabled=False))
    return timed, paced


def _regression(gates: Gates, device: str, bench: BenchResult, store: HistoryStore | None,
                warnings: list[str]) -> RegressionInfo | None:
    g = gates.regression
    if g is None or store is None:
        return None
    base = store.baseline(g.baseline, device)
    if base is None:
        return RegressionInfo(baseline=g.baseline, baseline_run=None, comparison=None)
    try:
        reference = store.samples_ms(base.run_id)
        floor, runs = noise_floor(store, RunIdentity.of_result(bench, device))
        comparison = compare_samples(reference, np.asarray(bench.samples_ms or [], dtype=np.float64),
                                     tolerance_pct=g.tolerance_pct, alpha=g.alpha, noise_floor_pct=floor,
                                     noise_runs=runs)
    except (HistoryError, InputError) as exc:
        warnings.append(f"{device}: baseline '{g.baseline}' (run {base.run_id}) cannot be compared: {exc}")
        return RegressionInfo(baseline=g.baseline, baseline_run=base.run_id, comparison=None)
    notes = comparability_notes(RunIdentity.of(store.get(base.run_id)), RunIdentity.of_result(bench, device))
    return RegressionInfo(baseline=g.baseline, baseline_run=base.run_id, comparison=comparison, notes=notes,
                          not_comparable=blocking_notes(notes, g.allow_different))


def _model_info(models: Models) -> ModelInfo:
    qualified = {"*": models.fixed} if models.fixed is not None else dict(models.per_target)
    return model_info(models.reference, qualified, sha_of, recipe=models.recipe, source=models.source, kind="onnx")


def _fingerprint(loaded: LoadedSpec, model: ModelInfo) -> dict[str, Any]:
    import onnx
    import onnxruntime
    import pydantic

    return fingerprint(loaded, model, host_facts(numpy=np.__version__, onnx=onnx.__version__,
                                                 onnxruntime=onnxruntime.__version__, pydantic=pydantic.__version__),
                       recipe=model.recipe)
