"""``edgeopt fleet check --devices SELECTION``: ``devices check`` on many devices at once."""

from __future__ import annotations

from pathlib import Path

import click

from ..devices.fleet_check import CheckRow, fleet_check
from ..errors import ExitCode
from ..fleet import FleetProgress
from ..fleet.result import all_failed_code
from ..settings import RemoteSpec
from .common import emit_json, json_option, targets_dir_option
from .devices_render import render_check_rows
from .fleet_options import FleetOptions, fleet_options
from .remote_options import remote_options


def check_exit_code(rows: list[CheckRow]) -> int:
    """3 every device unreachable/failed (4: every one refused its host key), 1 some device not ready or failed,
    0 all ready."""
    failed = all_failed_code(rows)
    if failed is not None:
        return failed
    return int(ExitCode.OK if all(r.ready for r in rows) else ExitCode.GATE_FAILED)


def check_warnings(rows: list[CheckRow]) -> list[str]:
    """Per device: a target mismatch and the target's runtimes it lacks though it is ready with another."""
    out = []
    for r in rows:
        rep = r.report
        if rep is None:
            continue
        if rep.target_mismatch:
            out.append(f"{r.device}: TARGET MISMATCH: not {rep.target} hardware: {'; '.join(rep.target_mismatch)}")
        if rep.ready and ";" in rep.summary:
            out.append(f"{r.device}: {rep.summary}")
    return out


def run_fleet_check(fleet: FleetOptions, remote: RemoteSpec, target: str | None, targets_dirs: tuple[Path, ...],
                    as_json: bool) -> int:
    """Probe the selected devices in parallel and render them; the fleet check's exit code."""
    with FleetProgress() as progress:
        rows = fleet_check(str(fleet.devices), remote=remote, target=target, targets_dirs=targets_dirs,
                           jobs=fleet.jobs, executor=fleet.executor, deadline_s=fleet.deadline_s or 300.0,
                           progress=progress)
    code = check_exit_code(rows)
    if as_json:
        emit_json({"devices": [r.model_dump(mode="json") for r in rows], "warnings": check_warnings(rows),
                   "exit_code": code})
        return code
    render_check_rows(rows)
    return code


@click.command("check")
@fleet_options(required=True)
@click.option("--target", "-t", default=None, help="Check for this target's runtimes [default: each device's].")
@remote_options(with_device=False)
@targets_dir_option
@json_option
def check_cmd(fleet: FleetOptions, target: str | None, remote: RemoteSpec, targets_dirs: tuple[Path, ...],
              as_json: bool) -> int:
    """Probe every selected device in parallel: ready or not, and what to install (edgeopt devices setup).

    Exit 0 every device ready, 1 a device is not ready or could not be reached, 2 bad input, 3 none reached.
    """
    return run_fleet_check(fleet, remote, target, targets_dirs, as_json)
