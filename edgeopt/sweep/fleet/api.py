"""``edgeopt sweep MODEL --devices SELECTION``: the host side once, then one measuring job per device.

1. Host side, once (:mod:`.host`): the inputs are checked, the eval data and the model go into the bundle,
   and every recipe is built for every distinct target of the selected devices: one host task per (target,
   recipe) on the executor (in this process, or an ordinary ``ray.remote(num_cpus=1)`` task under Ray).
2. One job per device (:mod:`.drive`'s, running :class:`~.job.SweepMeasure`) on the same executor as ``fleet
   bench`` (:class:`FleetRunner`): bounded concurrency, a deadline per device, a failure costs only its own row;
   under Ray each job holds its device's custom resource and the bundle travels by content hash.
3. Per device ``<out>/devices/<name>/sweep.json`` (and ``pareto.svg``), the fleet's summary (per level the
   devices' p50 spread, each device's recommendation, whether they agree) in ``<out>/fleet-sweep.json``, and
   every freshly measured level in the history, grouped by the fleet run.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ...fleet.artifacts import ModelRef
from ...fleet.devices import FleetDevice
from ...fleet.executors import DeviceEvents, Executor
from ...fleet.runner import FleetRunner
from ...fsutil import atomic_write_text
from ...settings import MeasureSettings, RemoteSpec
from ...untrusted import for_json
from ..api import DEFAULT_RECIPES, SweepOptions, check_inputs, swept_levels
from ..report import write_plot
from .drive import DeviceMeasure, FleetSweepPlan, Row, run_fleet_sweep
from .host import EVAL_FILE, Bundle, build_all, stage_inputs
from .job import SweepMeasure
from .rehome import WorkerOutput, rehome
from .result import ONE_PASS, FleetSweepKind, FleetSweepResult, FleetSweepRow

# Beyond the levels' own time: connect, upload, the references, the ranking rounds.
SWEEP_DEADLINE_S = 3600.0


def prepare(model: Path, options: SweepOptions, executor: Executor, *, targets: Sequence[str], out: Path,
            targets_dirs: tuple[Path, ...]) -> Bundle:
    """The host side, once: the bundle with the inputs and every recipe built for every target.

    Raises:
        InputError: bad model, eval data, metric, calibration data, or a named recipe that does not apply.
    """
    started = time.perf_counter()
    check_inputs(model, options)
    root = out / "host"
    shutil.rmtree(root / "artifacts", ignore_errors=True)  # rebuilt: stale recipes must not travel with the bundle
    root.mkdir(parents=True, exist_ok=True)
    model_rel, calib_rel, samples = stage_inputs(
        model, options.eval_data, calib=options.calib, preprocessing=options.preprocessing,
        eval_limit=options.eval_limit, metric=options.metric, root=root)
    inputs = ModelRef.of(root)
    prebuilt = build_all(executor, inputs, model=model_rel, calib=calib_rel or EVAL_FILE, targets=targets,
                         recipes=options.recipes or list(DEFAULT_RECIPES), named=bool(options.recipes),
                         preprocessing=options.preprocessing, targets_dirs=targets_dirs)
    return Bundle(ref=ModelRef.of(root), model=model_rel, calib=calib_rel, eval_samples=samples, prebuilt=prebuilt,
                  seconds=round(time.perf_counter() - started, 3))


@dataclass(frozen=True)
class OnePassPlan(FleetSweepPlan[Bundle]):
    """The one-pass sweep's part of the fleet sweep: recipes built once per target, each device's whole sweep (the
    ranking, shipping and shipped check included) measured on it, its sweep.json and history written here."""

    kind: ClassVar[FleetSweepKind[Any, Any]] = ONE_PASS
    default_deadline_s: ClassVar[float] = SWEEP_DEADLINE_S

    model: Path
    options: SweepOptions
    settings: MeasureSettings
    out: Path
    targets_dirs: tuple[Path, ...] = ()

    def host_side(self, fleet: FleetRunner, targets: list[str]) -> Bundle:
        return prepare(self.model, self.options, fleet.executor, targets=targets, out=self.out,
                       targets_dirs=self.targets_dirs)

    def measure(self, host: Bundle) -> DeviceMeasure:
        return SweepMeasure(host, self.options, self.settings, self.targets_dirs)

    def finish(self, host: Bundle, row: Row, fleet_id: str) -> Row:
        return _finish(row, self.out, self.model, self.options, fleet_id, Path(host.ref.root))

    def fields(self, host: Bundle, rows: list[Row]) -> dict[str, Any]:
        # Each device's own sweep warnings (runtimes it skipped, ...) reach the fleet's output, named by device,
        # then the host's (a history that could not be written).
        warnings = [f"{r.device}: {w}" for r in rows if r.result is not None for w in r.result.warnings]
        return {"model": str(self.model), "model_sha256": ModelRef.of(self.model).key, "targets": list(host.prebuilt),
                "warnings": warnings + [w for r in rows for w in r.device_warnings]}


def fleet_sweep(
    model: str | Path,
    options: SweepOptions,
    measure: MeasureSettings,
    *,
    devices: str | Sequence[str | FleetDevice],
    jobs: int | None = None,
    executor: str | Executor = "local",
    deadline_s: float | None = None,
    remote: RemoteSpec | None = None,
    target: str | None = None,
    targets_dirs: Sequence[Path] = (),
    progress: DeviceEvents | None = None,
    **remote_options: Any,
) -> FleetSweepResult:
    """Sweep ``model`` on every selected device: the host side once, then the devices in parallel.

    Args:
        model: an ONNX model. options, measure: as for :func:`edgeopt.sweep.api.run_sweep` (``options.history_db``:
            record every device's fresh levels, grouped by the fleet run).
        devices: a selection (names, ``tag:TAG``, globs) or :class:`FleetDevice` objects.
        jobs: devices measured at the same time at most (None: all). executor: ``local``, ``ray``, ``ray://...``.
        deadline_s: per-device deadline from the start of its job (None: 3600 s).
        remote: how every device is reached (inventory, key, known_hosts, ...; ``host``/``device`` unset).
        target: target for every device (None: each device's own). targets_dirs: extra target directories.
        progress: receives ``(device, event)`` (e.g. :class:`edgeopt.fleet.FleetProgress`).
        **remote_options: RemoteSpec fields overriding ``remote`` (``inventory``, ``key``, ``known_hosts``, ...).

    Raises:
        InputError: bad model, selection or option (exit 2).
    """
    model_path = Path(model)
    out = Path(options.out_dir or Path("out") / f"{model_path.stem}.sweep")
    plan = OnePassPlan(model_path, options, measure, out, tuple(targets_dirs))
    result: FleetSweepResult = run_fleet_sweep(plan, devices=devices, jobs=jobs, executor=executor,
                                               deadline_s=deadline_s, remote=remote, target=target,
                                               progress=progress, **remote_options)
    return result


def _finish(row: FleetSweepRow, out: Path, model: Path, options: SweepOptions, fleet_id: str,
            host_root: Path) -> FleetSweepRow:
    """A device's sweep as the host keeps it: host paths, ``devices/<name>/sweep.json`` + plot, the history; from a
    worker that did not share our paths (``host_root``: the bundle here), its deployment re-shipped here."""
    if row.result is None:
        return row
    dev_out = out / "devices" / row.device
    res, runs = row.result, row.level_runs
    dev_out.mkdir(parents=True, exist_ok=True)
    if Path(row.result.out_dir) != dev_out:  # a worker that did not share our paths: re-shipped, plot redrawn here
        if isinstance(row.from_worker, WorkerOutput):
            res, runs = rehome(res, runs, row.from_worker, host_root, dev_out, row.device)
        plot = write_plot(res.levels, res.objective, dev_out / "pareto.svg", min_retention=res.min_retention,
                          fps=res.fps, recommendation=res.recommendation)
        res = res.model_copy(update={"plot": str(plot)})
    res = res.model_copy(update={"model": str(model), "out_dir": str(dev_out)})
    atomic_write_text(dev_out / "sweep.json", for_json(res.model_dump_json(indent=2)) + "\n")
    ids: list[int] = []
    warnings: list[str] = []  # a history that cannot be written: the fleet's warning, named by device
    if options.history_db is not None and runs:
        from ...history.sweep_runs import record_or_warn

        ids = record_or_warn(options.history_db, swept_levels(runs), warnings,
                             model_sha256=res.model_sha256, device=row.device, group_id=fleet_id,
                             prefix=f"{row.device}: ")
    return row.model_copy(update={"result": res, "history_run_ids": ids, "level_runs": [], "from_worker": None,
                                  "device_warnings": warnings})
