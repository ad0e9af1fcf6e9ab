"""The generic bench: a model of a plug-in kind (``engine: generic``) measured through the same runner and agent
as every other run, its result read as cells of metric series in the kind's own metrics.

Flow: a deployment (a folder with ``deployment.json``, or that file) -> its model file with exactly its settings
(:func:`~edgeopt.deploy.use.deployed_settings`: a given setting that contradicts them is refused, exit 2) -> the
model's format -> its kind (the registry, never the folder's files) -> the kind's workload settings
(its pydantic model, :func:`parse_workload`; a deployment's recorded workload,
:func:`~edgeopt.deploy.use.deployed_workload`) -> the runtime (the target's first that loads the format, or
``--runtime``) -> the agent's ``run`` command through the runner (local subprocess or SSH) -> the kind's
``raw_cells(raw, workload)`` -> every value checked against its MetricSpec (impossible: the run is invalid) ->
:class:`~edgeopt.metrics.kind_result.KindBenchResult` (with the deployment it ran and, on another runtime version or
CPU than the measuring one, a warning).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from edgeopt_agent.protocol import RawRun

from .._version import __version__
from ..deploy.use import deployed_settings, deployed_workload, mark_any, open_deployment
from ..errors import InputError
from ..metrics.cells import ResultCell
from ..metrics.kind_result import KindBenchResult, checked_cells
from ..metrics.result import ModelInfo, RuntimeInfo, Settings
from ..metrics.target_match import target_mismatch
from ..registry import KindDescriptor, format_kind
from ..registry.lookup import choose_runtime, detect_format, model_digest
from ..runners import ProgressSink, Runner, raise_for_error
from ..runners.select import use_runner
from ..settings import MeasureSettings, RemoteSpec
from ..targets import Target, load_registry
from .api import agent_request
from .request import BenchRequest

__all__ = ["bench_kind", "benchmark_generic", "parse_workload"]


def parse_workload(kind: KindDescriptor, given: Mapping[str, Any] | None, *, where: str = "--workload",
                   ) -> BaseModel | None:
    """The kind's workload settings from ``given`` (``KEY=VALUE`` strings from the CLI, or a spec's block),
    validated by its model; its defaults when nothing is given; None for a kind that takes no workload.

    Raises:
        InputError: a key the model does not know, a bad value, or a workload for a kind that takes none.
    """
    model = kind.load_workload()
    if model is None:
        if given:
            raise InputError(f"{where}: kind {kind.name} takes no workload settings (got {', '.join(given)}): "
                             "drop them")
        return None
    try:
        return model.model_validate(dict(given or {}))
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"]) or "(workload)"
        fields = ", ".join(model.model_fields)
        raise InputError(f"{where} {key}: {err['msg']} (kind {kind.name}'s workload fields: {fields})") from None


def bench_kind(model: str | Path, settings: MeasureSettings, *, workload: Mapping[str, Any] | None = None,
               target: str | None = None, runner: Runner | None = None, remote: RemoteSpec | None = None,
               progress: ProgressSink | None = None, targets_dirs: Sequence[Path] = (),
               given: Collection[str] | None = None, override_deployment: bool = False) -> KindBenchResult:
    """Measure a model of a generic kind once, on this machine or the device ``remote`` / ``runner`` names.

    ``model`` may be a deployment of such a model (a folder with ``deployment.json``, or that file): its checked
    model file runs with exactly its runtime, options, threads, streams, batch and shapes, as a one-pass deployment
    does (docs/bench.md, "Deployments"), and with the workload it records; ``given``: the settings the caller set
    explicitly (None: those differing from the defaults), each of which, and each ``workload`` setting, must agree
    with the deployment unless ``override_deployment``.

    Raises:
        InputError: the model is not of a generic kind, a bad workload, runtime or option; a deployment with a
            changed file or a given setting that contradicts it (exit 2).
        RunnerError: the agent or the device failed (exit 3).
    """
    path = Path(model)
    use = open_deployment(path)
    if use is not None:
        settings = deployed_settings(use, settings, given=given, override=override_deployment)
        path = use.model_path
    fmt = str(detect_format(path))
    kind = format_kind(fmt)
    if kind.engine != "generic":
        raise InputError(f"{path} is a {kind.name} model: bench it with edgeopt bench (the {kind.engine} engine)")
    if kind.agent_command != "run":
        raise InputError(f"kind {kind.name} names agent command {kind.agent_command!r}: the generic engine runs the "
                         "agent's 'run' command; declare agent_command='run' with an agent runtime of its own")
    if use is not None:  # the workload it was measured with; a given setting must agree (docs/plugins.md)
        workload = deployed_workload(use, kind.load_workload(), dict(workload or {}), override=override_deployment)
    w = parse_workload(kind, workload)
    with use_runner(runner, remote, target) as placed:
        tgt = load_registry(extra_dirs=targets_dirs).get(placed.target or "local")
        local = placed.runner.describe().local
        runtime, options = choose_runtime(fmt, tgt, settings.runtime, settings.runtime_options, local=local)
        request = agent_request(path, settings, tgt, runtime, options)
        started = _dt.datetime.now(_dt.timezone.utc)
        raw = raise_for_error(placed.runner.run(request, path, progress), placed.runner.name)
        digest, size = model_digest(path, fmt)
        head = {"model": ModelInfo(path=str(path), sha256=digest, size_bytes=size, params=0), "model_format": fmt,
                "runner": placed.runner.name, "started_at": started.isoformat(timespec="milliseconds")}
        result = kind_result(kind, raw, w, tgt, head)
    if use is None:
        return result
    return mark_any(use, result, result.runtime.version, result.environment.get("cpu_flags") or [])


def benchmark_generic(model: Path, kind: KindDescriptor, r: BenchRequest) -> KindBenchResult:
    """The generic engine's ``bench_api`` entry (:func:`edgeopt.benchmark` on a plug-in kind's model):
    :func:`bench_kind` with the request's settings and workload (the kind's settings model or a mapping)."""
    return bench_kind(model, r.settings, workload=r.workload_fields() or None, target=r.target, runner=r.runner,
                      remote=r.remote, progress=r.progress, targets_dirs=r.targets_dirs,
                      override_deployment=r.override_deployment)


def kind_result(kind: KindDescriptor, raw: RawRun, workload: BaseModel | None, tgt: Target,
                head: Mapping[str, Any]) -> KindBenchResult:
    """The typed result of one raw run of ``kind``: its cells (the kind's ``raw_cells``), checked.

    Raises:
        InputError: the kind's ``raw_cells`` returned something other than cells (a plug-in bug, named).
    """
    cells = kind.load_raw_cells()(raw, workload)
    if not isinstance(cells, tuple) or not all(isinstance(c, ResultCell) for c in cells):
        raise InputError(f"kind {kind.name}: raw_cells {kind.raw_cells!r} returned {type(cells).__name__}, not a "
                         "tuple of edgeopt.metrics.cells.ResultCell: fix the plug-in")
    cells, reasons = checked_cells(kind, cells)
    req = raw.request or {}
    if raw.truncated:
        reasons.append(f"the watchdog stopped the timed phase at max_duration_s={req.get('max_duration_s')} s")
    if not cells:
        reasons.append(f"kind {kind.name}'s raw_cells found no cell in the run")
    mismatch = target_mismatch(tgt, raw.environment)
    return KindBenchResult(
        model_kind=kind.name, edgeopt_version=__version__, target=tgt.name, runtime=RuntimeInfo(**raw.runtime),
        settings=Settings(**{k: req[k] for k in Settings.model_fields if k in req}),
        workload=workload.model_dump(mode="json") if workload is not None else {},
        timed_s=float(raw.timed_wall_s), truncated=raw.truncated, cells=cells, valid=not reasons,
        invalid_reasons=reasons, environment=raw.environment, target_mismatch=mismatch, **head)
