"""``edgeopt fleet check --devices SELECTION``: ``devices check`` on many devices at once."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ExitCode
from ..fleet import FleetProgress
from ..fleet.check_job import CheckRow, fleet_check
from .common import emit_json, json_option, targets_dir_option
from .fleet_options import FleetOptions, fleet_options


def check_exit_code(rows: list[CheckRow]) -> int:
    """3 every device unreachable/failed, 1 some device not ready or failed, 0 all ready."""
    if rows and all(r.status == "error" for r in rows):
        return int(ExitCode.DEVICE)
    return int(ExitCode.OK if all(r.ready for r in rows) else ExitCode.GATE_FAILED)


@click.command("check")
@fleet_options(required=True)
@click.option("--target", "-t", default=None, help="Check for this target's runtimes [default: each device's].")
@click.option("--inventory", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Devices file [default: $EDGEOPT_INVENTORY or ./devices.yaml].")
@click.option("--key", type=click.Path(dir_okay=False, path_type=Path), default=None, help="SSH private key.")
@click.option("--known-hosts", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Trusted host keys [default: ~/.ssh/known_hosts].")
@click.option("--accept-new-host-key", is_flag=True, help="Trust and record host keys seen for the first time.")
@targets_dir_option
@json_option
def check_cmd(fleet: FleetOptions, target: str | None, inventory: Path | None, key: Path | None,
              known_hosts: Path | None, accept_new_host_key: bool, targets_dirs: tuple[Path, ...],
              as_json: bool) -> int:
    """Probe every selected device in parallel: ready or not, and what to install (edgeopt devices setup).

    Exit 0 every device ready, 1 a device is not ready or could not be reached, 2 bad input, 3 none reached.
    """
    with FleetProgress() as progress:
        rows = fleet_check(str(fleet.devices), inventory=inventory, key=key, known_hosts=known_hosts,
                           accept_new_host_key=accept_new_host_key, target=target, targets_dirs=targets_dirs,
                           jobs=fleet.jobs, executor=fleet.executor, deadline_s=fleet.deadline_s or 300.0,
                           progress=progress)
    code = check_exit_code(rows)
    if as_json:
        emit_json({"devices": [r.model_dump(mode="json") for r in rows], "exit_code": code})
        return code
    for r in rows:
        if r.report is None:
            click.echo(f"{r.device}: ERROR ({r.error_kind}): {r.error}")
            continue
        rep = r.report
        click.echo(f"{r.device}: {'ready' if rep.ready else 'NOT READY'} ({rep.arch}, Python {rep.python} at "
                   f"{rep.python_executable})")
        for problem in rep.problems:
            click.echo(f"  - {problem}")
    return code
