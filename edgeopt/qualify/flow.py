"""The one qualification flow every model kind runs (issue 30: one engine per task).

Flow of ``edgeopt.qualify`` (:mod:`edgeopt.api`): load the spec (profiles merged; every spec error names file:line:
key) -> :func:`~.engine.run_qualification` asks the registry the model's kind and calls its ``qualify`` entry ->
the entry calls :func:`qualify_flow` with its plan builder -> here: place the targets (plain data, nothing connects
yet) -> the kind's host side builds its :class:`KindPlan` (the reference, the qualified model per placement,
retention when gated, a deployment's settings; everything that can fail on the host fails before the first device
run) -> per device a fleet job on the chosen executor (threads or Ray tasks; :mod:`.device_jobs`) that measures
the model with the kind's :class:`~.device_jobs.Measurement` -> here, per device: the kind's gates, the ``target``
row, a deployment's ``deployment_match`` row, the history record -> ``QualifyResult`` -> back in the API: reports
(json, html, junit, markdown; :mod:`edgeopt.reports`) -> optional sinks.

What differs per kind comes from its plan (how it measures, its gates on its result, its history record); nothing
here asks which kind the model is, so a deployment keeps its promises (files hashed, settings applied, conflicts
refused, ``deployment_match`` per device) for every kind alike.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from ..deploy.use import (
    DeploymentConflictError,
    DeploymentUse,
    deployed_settings,
    deployment_mismatch,
    mark_any,
)
from ..errors import InputError
from ..fleet.artifacts import ModelRef
from ..fleet.executors import make_executor
from ..fleet.result import DeviceOutcome
from ..fleet.runner import run_jobs
from ..history import HistoryStore, open_store
from ..settings import MeasureSettings
from .device_jobs import DEADLINE_MARGIN_S, MeasuredRow, Measurement, QualifyJob, device_events
from .gate_rows import deployment_row, target_row
from .gate_spec import Gates
from .gates import error_results
from .loader import LoadedSpec
from .options import QualifyOptions
from .outcome import (
    Clock,
    Run,
    all_pass,
    assemble,
    default_report_dir,
    error_device,
    parallel_jobs,
    say_verdict,
    with_target_row,
)
from .placement import Placement, place
from .result import DeviceResult, GateResult, ModelInfo, QualifyResult, RetentionResult, SweepPoint

Log = Callable[[str], None]


@dataclass(frozen=True)
class Start:
    """What a kind's plan is built from: the loaded spec, the caller's options, the placed targets, the work dir."""

    loaded: LoadedSpec
    options: QualifyOptions
    placements: list[Placement]
    work: Path
    say: Log


@dataclass(kw_only=True)
class KindPlan:
    """One kind's part of a qualification, built on the host before any device runs.

    Attributes:
        measure: how a device measures the model (picklable: it travels to the executor's worker).
        qualified: the model measured on each placement (by placement index).
        model: what the result says about the reference and the qualified models.
        fingerprint: the run's reproducibility fingerprint.
        retention: retention per target name (when gated).
        deployment: the deployment whose files are qualified (its settings already applied to the measurement):
            every device gets its ``deployment_match`` row and its result the deployment it ran.
        runs_per_device: timed runs a device makes (its default deadline allows each ``measure.max_duration_s``).
    """

    measure: Measurement
    qualified: dict[int, Path]
    model: ModelInfo
    fingerprint: dict[str, Any]
    retention: dict[str, RetentionResult] = field(default_factory=dict)
    deployment: DeploymentUse | None = None
    runs_per_device: int = 1

    def judge(self, p: Placement, runs: tuple[Any, ...], retention: RetentionResult | None,
              store: HistoryStore | None, warnings: list[str]) -> tuple[list[GateResult], dict[str, Any]]:
        """The kind's gate rows on one device's runs (the first is the judged result), and its
        :class:`DeviceResult` fields (``bench``, ``llm``, ...)."""
        raise NotImplementedError

    def record(self, store: HistoryStore, result: Any, *, device: str, verdict: str, group_id: str,
               label: str) -> int:
        """The history run id of one device's result (recorded as its kind's run: ``HistoryStore.record``)."""
        return store.record(result, kind="qualify", device=device, verdict=verdict, group_id=group_id,
                            label=label).id

    def error_gates(self, gates: Gates, device: str, message: str) -> list[GateResult]:
        """The rows of a device that could not run: each active gate of the spec an error."""
        return error_results(gates, device, message)

    def sound(self, result: Any) -> bool:
        """Whether the result may pass at all (beyond its gates)."""
        return True


def qualify_flow(loaded: LoadedSpec, o: QualifyOptions, build: Callable[[Start], KindPlan]) -> QualifyResult:
    """Measure the loaded spec's model on each of its devices, in parallel, and judge it: the kind's ``build``
    makes its plan on the host (before any device work), the flow runs and judges the devices.

    Raises:
        QualifySpecError / InputError: invalid spec, model, data, options or history path (exit 2), before any
            device work where it can be known then.
    """
    clock = Clock()
    say = o.log or (lambda message: None)
    s = loaded.spec
    placements = place(loaded, o.targets_dirs)
    parallel = parallel_jobs(o.jobs, len(placements))
    executor = make_executor(o.executor)
    if o.deadline_s is not None and o.deadline_s <= 0:
        raise InputError(f"--deadline {o.deadline_s:g}: give each device a positive number of seconds")
    _check_sinks(loaded)
    points = _sweep_points(o.sweep)
    out_dir = Path(o.report_dir) if o.report_dir is not None else default_report_dir(s.name)
    run = Run(loaded, clock, out_dir, open_store(o.history_db) if (o.record or s.gates.regression) else None,
              uuid.uuid4().hex[:12])
    plan = build(Start(loaded, o, placements, out_dir / "work", say))
    warnings: list[str] = [p.note for p in placements if p.note]
    deadline = o.deadline_s if o.deadline_s is not None else \
        plan.runs_per_device * s.measure.max_duration_s + DEADLINE_MARGIN_S
    refs = {path: ModelRef.of(path) for path in dict.fromkeys(plan.qualified.values())}
    jobs = [QualifyJob(p, refs[plan.qualified[p.index]], plan.measure, deadline,
                       str(plan.qualified[p.index]), tuple(o.targets_dirs)) for p in placements]
    rows = run_jobs(jobs, parallel=parallel, executor=executor, progress=device_events(o.progress, say))
    group = run.group_id if o.record else None
    devices = [_judge(run, plan, p, row, group, say, warnings) for p, row in zip(placements, rows, strict=True)]
    return assemble(run, devices, warnings, model=plan.model, retention=plan.retention,
                    fingerprint=plan.fingerprint, sweep=points)


def per_target(start: Start, model_for: Callable[[str], Path],
               retention_of: Callable[[Path], RetentionResult] | None,
               ) -> tuple[dict[int, Path], dict[str, Path], dict[str, RetentionResult]]:
    """The qualified model made once per target name (a recipe's output depends on it) and, when ``retention_of``
    is given (retention is gated), each one's retention: by placement index, by target name, retention by target."""
    by_target: dict[str, Path] = {}
    retention: dict[str, RetentionResult] = {}
    for p in start.placements:
        if p.target not in by_target:
            by_target[p.target] = model = model_for(p.target)
            if retention_of is not None:
                retention[p.target] = retention_of(model)
    return {p.index: by_target[p.target] for p in start.placements}, by_target, retention


def _check_sinks(loaded: LoadedSpec) -> None:
    """Refuse a sink that cannot work here (mlflow not installed) before any device work."""
    if loaded.spec.sinks.mlflow is None:
        return
    from ..sinks.mlflow_sink import require_mlflow

    try:
        require_mlflow()
    except InputError as exc:
        raise loaded.error(("sinks", "mlflow"), str(exc)) from None


def _sweep_points(sweep: Sequence[SweepPoint | Mapping[str, Any]] | None) -> list[SweepPoint] | None:
    if not sweep:
        return None
    try:
        return [p if isinstance(p, SweepPoint) else SweepPoint.model_validate(dict(p)) for p in sweep]
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(f"sweep point: {'.'.join(str(x) for x in err['loc'])}: {err['msg']}; give label, "
                         "latency_ms > 0 and retention >= 0") from None


OVERRIDE_KEY = "override_deployment: true"  # how a spec lets its settings win over a deployment's


@contextlib.contextmanager
def deployment_conflict(loaded: LoadedSpec, given: Iterable[str], names: Mapping[str, str]) -> Iterator[None]:
    """A setting of the spec that contradicts the deployment (:class:`DeploymentConflictError`) as a spec error at
    the key it names (``names``: deployed setting -> spec key), exit 2 like every spec error."""
    try:
        yield
    except DeploymentConflictError as exc:
        key = next((k for k in sorted(given) if names[k] in str(exc)), next(iter(names)))
        raise loaded.error(tuple(names[key].split(".")), str(exc)) from None


# Spec keys of the measurement settings a deployment fixes (how a conflict names them): the one-pass and the plug-in
# kinds' (the generative kind's are its ``llm:`` keys).
MEASURE_KEYS = {"runtime": "measure.runtime", "threads": "measure.threads", "streams": "measure.streams",
                "batch": "measure.batch", "shapes": "model.shapes"}


def deployed_measure(loaded: LoadedSpec, use: DeploymentUse, settings: MeasureSettings) -> MeasureSettings:
    """``settings`` with the deployment's runtime, options, threads, streams, batch and shapes; a ``measure`` key (or
    ``model.shapes``) the spec sets must agree unless ``override_deployment``.

    Raises:
        QualifySpecError: a spec key that contradicts the deployment, at that key (exit 2).
    """
    s = loaded.spec
    given: set[str] = {k for k in ("runtime", "threads", "streams", "batch") if k in s.measure.model_fields_set}
    given |= {"shapes"} if s.model.shapes else set()
    with deployment_conflict(loaded, given, MEASURE_KEYS):
        return deployed_settings(use, settings, given=given, override=s.override_deployment, names=MEASURE_KEYS,
                                 override_hint=OVERRIDE_KEY)


def model_info(reference: Path, qualified: Mapping[str, Path], digest: Callable[[Path], str], *,
               recipe: str | None, source: Literal["model", "optimized", "recipe"],
               kind: Literal["onnx", "llm", "plugin"]) -> ModelInfo:
    """What the result says of the reference and the qualified model per target (``digest``: the kind's hash of a
    model: a file's SHA-256, a folder's over its files)."""
    return ModelInfo(reference_path=str(reference), reference_sha256=digest(reference),
                     qualified={t: str(m) for t, m in qualified.items()},
                     qualified_sha256={t: digest(m) for t, m in qualified.items()}, recipe=recipe, source=source,
                     kind=kind)


def fingerprint(loaded: LoadedSpec, model: ModelInfo, host: dict[str, str], **extra: Any) -> dict[str, Any]:
    """The run's reproducibility fingerprint: the spec, the reference, the seed and measure settings, what the
    kind adds (``extra``: its recipe, its workload) and the measuring host."""
    s = loaded.spec
    return {"spec_sha256": loaded.sha256, "profiles": loaded.profiles, "reference_sha256": model.reference_sha256,
            **extra, "seed": s.measure.seed, "measure": s.measure.model_dump(mode="json"), "host": host}


def run_facts(result: Any) -> tuple[str, list[str]]:
    """The runtime version and the agent's CPU flags of any kind's result (what a deployment is matched on)."""
    runtime = result.runtime
    version = runtime.get("version", "") if isinstance(runtime, Mapping) else getattr(runtime, "version", "")
    flags: Iterable[str] = result.environment.get("cpu_flags") or []
    return str(version or ""), list(flags)


def _judge(run: Run, plan: KindPlan, p: Placement, row: DeviceOutcome, group_id: str | None, say: Log,
           warnings: list[str]) -> DeviceResult:
    """A device's measured runs judged: the kind's gates, the target row, a deployment's row, the history record;
    a row that could not run (unreachable, past its deadline) has every gate errored."""
    s = run.loaded.spec
    runs = row.runs if isinstance(row, MeasuredRow) else ()
    if not runs:
        return error_device(p, row, lambda error: plan.error_gates(s.gates, p.label, error))
    result = runs[0]
    use = plan.deployment
    if use is not None:  # the deployment it ran and, on another runtime version or CPU, a warning
        result = mark_any(use, result, *run_facts(result))
        runs = (result, *runs[1:])
    gates, fields = plan.judge(p, runs, plan.retention.get(p.target), run.store, warnings)
    mismatch = target_row(p.label, result.target_mismatch, result.target, allowed=s.allow_target_mismatch)
    gates = with_target_row(gates, mismatch, p.label, say)
    if use is not None:
        gates.append(deployment_row(p.label, use.deployment.name, deployment_mismatch(use.deployment,
                                                                                      *run_facts(result)),
                                    allowed=s.allow_deployment_mismatch))
    passed = all_pass(gates) and plan.sound(result)
    run_id = None
    if run.store is not None and group_id is not None:
        run_id = plan.record(run.store, result, device=p.label, verdict="pass" if passed else "fail",
                             group_id=group_id, label=s.name)
    say_verdict(say, p.label, gates, passed)
    return DeviceResult(label=p.label, target=p.target, runner=p.runner_name, status="ok", passed=passed,
                        gates=gates, history_run_id=run_id, **fields)
