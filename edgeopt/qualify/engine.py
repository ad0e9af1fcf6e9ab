"""The qualification engine: measure a loaded spec's model on its devices and judge it against its gates.

Flow of ``edgeopt.qualify`` (:mod:`edgeopt.api`): load the spec (profiles merged; every spec error names
file:line: key) -> here: place the targets (plain data, nothing connects yet) -> build / optimize the model ->
retention on the host (when gated) -> per device, a fleet job on the chosen executor (threads or Ray tasks;
:mod:`.device_jobs`): timed run (raw samples kept), frame-paced run (deadline_miss gate) -> here, per device:
baseline comparison (regression gate), gates, costs, history record -> ``QualifyResult`` -> back in the API:
reports (json, html, junit, markdown; :mod:`edgeopt.reports`) -> optional sinks.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from ..deploy.use import DeploymentConflictError, DeploymentUse, deployed_settings, mark_result, mismatch_of
from ..dispatch import entry
from ..errors import InputError
from ..fleet.artifacts import ModelRef
from ..fleet.executors import Executor, make_executor
from ..fleet.result import DeviceOutcome
from ..fleet.runner import run_jobs
from ..history import HistoryError, HistoryStore, compare_samples, open_store
from ..history.compare import RunIdentity, blocking_notes, comparability_notes, noise_floor
from ..metrics.deadline import frames_required
from ..metrics.latency import PERCENTILES, required_samples
from ..metrics.result import BenchResult
from ..registry import KindDescriptor
from ..runners import ProgressSink
from ..settings import EnergySettings, MeasureSettings
from .artifacts import Models, prepare, qualified_for, sha_of
from .costs import cost_per_million
from .device_jobs import DEADLINE_MARGIN_S, QualifyJob, QualifyRow, device_events
from .gate_spec import Gates
from .gates import GateContext, deployment_check, evaluate, target_check
from .kind_check import spec_kind
from .loader import LoadedSpec
from .options import QualifyOptions
from .outcome import (
    Clock,
    Run,
    all_pass,
    assemble,
    default_report_dir,
    error_device,
    host_facts,
    parallel_jobs,
    say_verdict,
    with_target_row,
)
from .placement import Placement, place
from .result import (
    DeviceResult,
    ModelInfo,
    QualifyResult,
    RegressionInfo,
    RetentionResult,
    SweepPoint,
)
from .retention import HostOnnxEvaluator, RetentionEvaluator
from .spec import QualifySpec

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
    clock = Clock()
    say = o.log or (lambda message: None)
    s = loaded.spec
    placements = place(loaded, o.targets_dirs)
    fleet = _fleet_plan(loaded.spec, len(placements), o.jobs, o.executor, o.deadline_s)
    _check_sinks(loaded)
    points = _sweep_points(o.sweep)
    out_dir = Path(o.report_dir) if o.report_dir is not None else default_report_dir(s.name)
    run = Run(loaded, clock, out_dir, open_store(o.history_db) if (o.record or s.gates.regression) else None,
              uuid.uuid4().hex[:12])
    work = out_dir / "work"
    models = prepare(loaded, work, say)
    warnings: list[str] = [p.note for p in placements if p.note]
    # Everything that can fail on the host (recipes, eval data) happens before the first device run.
    qualified, retention = _host_side(loaded, placements, models, work, o.evaluator or HostOnnxEvaluator(), say)
    devices = _run_devices(loaded, placements, qualified, retention, run.store, run.group_id if o.record else None,
                           o.targets_dirs, o.progress, say, warnings, fleet, models.deployment)
    return assemble(run, devices, warnings, model=_model_info(models), retention=retention,
                    fingerprint=_fingerprint(loaded, models), sweep=points)


def _check_sinks(loaded: LoadedSpec) -> None:
    """Refuse a sink that cannot work here (mlflow not installed) before any device work."""
    if loaded.spec.sinks.mlflow is None:
        return
    from ..sinks.mlflow_sink import require_mlflow

    try:
        require_mlflow()
    except InputError as exc:
        raise loaded.error(("sinks", "mlflow"), str(exc)) from None



def _host_side(loaded: LoadedSpec, placements: list[Placement], models: Models, work: Path,
               evaluator: RetentionEvaluator, say: Callable[[str], None],
               ) -> tuple[dict[int, Path], dict[str, RetentionResult]]:
    """The model qualified for each placement, and the retention per target (when gated), on the host."""
    s = loaded.spec
    qualified: dict[int, Path] = {}
    retention: dict[str, RetentionResult] = {}
    for placement in placements:
        qualified[placement.index] = model = qualified_for(models, loaded, placement.target, work, say)
        if s.gates.retention is not None and placement.target not in retention:
            say(f"retention of {model.name} vs {models.reference.name} on the host")
            retention[placement.target] = evaluator.evaluate(
                models.reference, model, data=loaded.resolve(s.eval.data) if s.eval.data else None,
                samples=s.eval.samples, metric=s.eval.metric_spec(), shapes=s.model.shapes, seed=s.measure.seed,
                **({"output": s.eval.output} if s.eval.output is not None else {}))
    return qualified, retention


@dataclass(frozen=True)
class _FleetPlan:
    """How the devices run: at most ``parallel`` at once, each within ``deadline_s``."""

    parallel: int
    deadline_s: float
    executor: Executor


def _fleet_plan(s: QualifySpec, count: int, jobs: int | None, executor: str | Executor,
                deadline_s: float | None) -> _FleetPlan:
    """``--jobs`` (default: every device at once), ``--executor`` and ``--deadline`` checked.

    Raises:
        InputError: jobs < 1, a deadline <= 0, or an unknown executor.
    """
    parallel = parallel_jobs(jobs, count)
    if deadline_s is not None and deadline_s <= 0:
        raise InputError(f"--deadline {deadline_s:g}: give each device a positive number of seconds")
    runs = 2 if s.gates.deadline_miss is not None else 1
    deadline = deadline_s if deadline_s is not None else runs * s.measure.max_duration_s + DEADLINE_MARGIN_S
    return _FleetPlan(parallel=parallel, deadline_s=deadline, executor=make_executor(executor))


def _run_devices(loaded: LoadedSpec, placements: list[Placement], qualified: dict[int, Path],
                 retention: dict[str, RetentionResult], store: HistoryStore | None, group_id: str | None,
                 targets_dirs: Sequence[Path], progress: ProgressSink | None, say: Callable[[str], None],
                 warnings: list[str], fleet: _FleetPlan, deployment: DeploymentUse | None) -> list[DeviceResult]:
    """Every placement's runs as a fleet job each, in parallel on the plan's executor; then, here on the driver,
    each device's gates, baseline comparison and history record, in spec order."""
    timed, paced = _measure_settings(loaded.spec)
    if deployment is not None:  # exactly the deployment's settings (docs/qualify.md, "Deployments")
        timed, paced = _deployed(loaded, deployment, timed, paced)
    refs = {path: ModelRef.of(path) for path in dict.fromkeys(qualified.values())}
    jobs = [QualifyJob(p, refs[qualified[p.index]], timed, paced, fleet.deadline_s, str(qualified[p.index]),
                       tuple(targets_dirs)) for p in placements]
    rows = run_jobs(jobs, parallel=fleet.parallel, executor=fleet.executor, progress=device_events(progress, say))
    return [_judge(loaded, p, row, retention.get(p.target), store, group_id, say, warnings, deployment)
            for p, row in zip(placements, rows, strict=True)]


# Spec keys of the settings a deployment fixes (how a conflict names them).
_SPEC_KEYS = {"runtime": "measure.runtime", "threads": "measure.threads", "streams": "measure.streams",
              "batch": "measure.batch", "shapes": "model.shapes"}


def _deployed(loaded: LoadedSpec, use: DeploymentUse, timed: MeasureSettings, paced: MeasureSettings | None,
              ) -> tuple[MeasureSettings, MeasureSettings | None]:
    """The runs' settings with the deployment's; a spec key set explicitly must agree unless override_deployment.

    Raises:
        QualifySpecError: a measure key (or model.shapes) that contradicts the deployment (exit 2).
    """
    s = loaded.spec
    given: set[str] = {k for k in ("runtime", "threads", "streams", "batch") if k in s.measure.model_fields_set}
    given |= {"shapes"} if s.model.shapes else set()
    kw: dict[str, Any] = {"given": given, "override": s.override_deployment, "names": _SPEC_KEYS,
                          "override_hint": "override_deployment: true"}
    try:
        timed = deployed_settings(use, timed, **kw)
        paced = deployed_settings(use, paced, **kw).replace(streams=1) if paced is not None else None
    except DeploymentConflictError as exc:
        key = next((k for k in given if _SPEC_KEYS[k] in str(exc)), "runtime")
        raise loaded.error(tuple(_SPEC_KEYS[key].split(".")), str(exc)) from None
    return timed, paced


def _sweep_points(sweep: Sequence[SweepPoint | Mapping[str, Any]] | None) -> list[SweepPoint] | None:
    if not sweep:
        return None
    try:
        return [p if isinstance(p, SweepPoint) else SweepPoint.model_validate(dict(p)) for p in sweep]
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(f"sweep point: {'.'.join(str(x) for x in err['loc'])}: {err['msg']}; give label, "
                         "latency_ms > 0 and retention >= 0") from None


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


def _judge(loaded: LoadedSpec, p: Placement, row: DeviceOutcome, retention: RetentionResult | None,
           store: HistoryStore | None, group_id: str | None, say: Callable[[str], None],
           warnings: list[str], deployment: DeploymentUse | None = None) -> DeviceResult:
    """A device's measured runs judged against the gates (baseline comparison, costs, history record); a row that
    could not run (unreachable, past its deadline) has every gate errored."""
    s = loaded.spec
    bench = row.bench if isinstance(row, QualifyRow) else None
    if bench is None:
        return error_device(p, row, s.gates)
    paced = row.paced if isinstance(row, QualifyRow) else None
    if deployment is not None:
        bench = mark_result(deployment, bench)
    regression = _regression(s.gates, p.label, bench, store, warnings)
    ctx = GateContext(device=p.label, bench=bench, paced=paced, retention=retention, regression=regression)
    gates = with_target_row(evaluate(s.gates, ctx), target_check(ctx, allowed=s.allow_target_mismatch), p.label, say)
    if deployment is not None:
        gates.append(deployment_check(ctx, deployment.deployment.name, mismatch_of(deployment, bench),
                                      allowed=s.allow_deployment_mismatch))
    passed = all_pass(gates)
    costs = None
    if bench.energy is not None and bench.energy.energy_per_inference_mj is not None:
        costs = cost_per_million(bench.energy.energy_per_inference_mj, source=bench.energy.source, settings=s.costs)
    run_id = None
    if store is not None and group_id is not None:
        run_id = store.record(bench, kind="qualify", device=p.label, verdict="pass" if passed else "fail",
                              group_id=group_id, label=s.name).id
    say_verdict(say, p.label, gates, passed)
    return DeviceResult(label=p.label, target=p.target, runner=p.runner_name, status="ok", passed=passed,
                        bench=bench, paced=paced.model_copy(update={"samples_ms": None}) if paced else None,
                        gates=gates, costs=costs, regression=regression, history_run_id=run_id)


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
    qualified = dict(models.per_target)
    if models.fixed is not None:
        qualified = {"*": models.fixed}
    return ModelInfo(
        reference_path=str(models.reference), reference_sha256=sha_of(models.reference),
        qualified={k: str(v) for k, v in qualified.items()},
        qualified_sha256={k: sha_of(v) for k, v in qualified.items()},
        recipe=models.recipe, source=models.source,
    )


def _fingerprint(loaded: LoadedSpec, models: Models) -> dict[str, Any]:
    import onnx
    import onnxruntime
    import pydantic

    s = loaded.spec
    return {
        "spec_sha256": loaded.sha256,
        "profiles": loaded.profiles,
        "reference_sha256": sha_of(models.reference),
        "recipe": models.recipe,
        "seed": s.measure.seed,
        "measure": s.measure.model_dump(mode="json"),
        "host": host_facts(numpy=np.__version__, onnx=onnx.__version__, onnxruntime=onnxruntime.__version__,
                           pydantic=pydantic.__version__),
    }
