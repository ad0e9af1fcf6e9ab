"""``edgeopt sweep MODEL --devices SELECTION``: the host side once, then one measuring job per device.

1. Host side, once (:mod:`.host`): the inputs are checked, the eval data and the model go into the bundle,
   and every recipe is built for every distinct target of the selected devices: one host task per (target,
   recipe) on the executor (in this process, or an ordinary ``ray.remote(num_cpus=1)`` task under Ray).
2. One :class:`~.job.SweepJob` per device on the same executor as ``fleet bench`` (:class:`FleetRunner`):
   bounded concurrency, a deadline per device, a failure costs only its own row; under Ray each job holds its
   device's custom resource and the bundle travels by content hash.
3. Per device ``<out>/devices/<name>/sweep.json`` (and ``pareto.svg``), the fleet's summary (per level the
   devices' p50 spread, each device's recommendation, whether they agree) in ``<out>/fleet-sweep.json``, and
   every freshly measured level in the history, grouped by the fleet run.
"""

from __future__ import annotations

import datetime as _dt
import shutil
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..._version import __version__
from ...fleet.artifacts import ModelRef
from ...fleet.devices import FleetDevice, fleet_selection, resolve_devices
from ...fleet.executors import DeviceEvents, Executor
from ...fleet.runner import FleetRunner
from ...fsutil import atomic_write_text
from ...settings import MeasureSettings, RemoteSpec
from ...untrusted import for_json
from ..api import DEFAULT_RECIPES, SweepOptions, check_inputs, swept_levels
from ..report import write_plot
from .drive import device_deadline, sweep_devices
from .host import EVAL_FILE, Bundle, build_all, stage_inputs
from .job import SweepJob
from .result import ONE_PASS, FleetSweepResult, FleetSweepRow

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
    selected = resolve_devices(devices, remote, **remote_options)
    deadline = device_deadline(deadline_s, SWEEP_DEADLINE_S)
    out = Path(options.out_dir or Path("out") / f"{model_path.stem}.sweep")
    fleet = FleetRunner(selected, jobs=jobs, executor=executor, progress=progress)
    targets = list(dict.fromkeys(target or d.target for d in selected))
    fleet_id = uuid.uuid4().hex[:12]
    started, started_at = time.perf_counter(), _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    bundle, rows = sweep_devices(
        fleet, lambda: prepare(model_path, options, fleet.executor, targets=targets, out=out,
                               targets_dirs=tuple(targets_dirs)),
        lambda d, built: SweepJob(d, built, options, measure, target or d.target, out / "devices" / d.name,
                                   deadline, tuple(targets_dirs)), FleetSweepRow)
    warnings: list[str] = []
    rows = [_finish(r, out, model_path, options, fleet_id, warnings) for r in rows]
    # Each device's own sweep warnings (runtimes it skipped, ...) reach the fleet's output, named by device.
    warnings = [f"{r.device}: {w}" for r in rows if r.result is not None for w in r.result.warnings] + warnings
    return ONE_PASS.write(
        rows, out, edgeopt_version=__version__, fleet_id=fleet_id, model=str(model_path),
        model_sha256=ModelRef.of(model).key, selection=fleet_selection(devices), executor=fleet.executor.name,
        jobs=fleet.jobs, deadline_s=deadline, started_at=started_at, seconds=round(time.perf_counter() - started, 3),
        host_seconds=bundle.seconds, targets=targets, warnings=warnings)


def _finish(row: FleetSweepRow, out: Path, model: Path, options: SweepOptions, fleet_id: str,
            warnings: list[str]) -> FleetSweepRow:
    """A device's sweep as the host keeps it: host paths, ``devices/<name>/sweep.json`` + plot, the history."""
    if row.result is None:
        return row
    dev_out = out / "devices" / row.device
    res = row.result.model_copy(update={"model": str(model), "out_dir": str(dev_out)})
    dev_out.mkdir(parents=True, exist_ok=True)
    if Path(row.result.out_dir) != dev_out:  # a worker that did not share our paths: the plot is redrawn here
        plot = write_plot(res.levels, res.objective, dev_out / "pareto.svg", min_retention=res.min_retention,
                          fps=res.fps, recommendation=res.recommendation)
        res = res.model_copy(update={"plot": str(plot)})
    atomic_write_text(dev_out / "sweep.json", for_json(res.model_dump_json(indent=2)) + "\n")
    ids: list[int] = []
    if options.history_db is not None and row.level_runs:
        from ...history.sweep_runs import record_or_warn

        ids = record_or_warn(options.history_db, swept_levels(row.level_runs), warnings,
                             model_sha256=res.model_sha256, device=row.device, group_id=fleet_id,
                             prefix=f"{row.device}: ")
    return row.model_copy(update={"result": res, "history_run_ids": ids, "level_runs": []})
