"""``edgeopt devices setup NAME | --devices SELECTION``: a venv with numpy and the runtimes on each device."""

from __future__ import annotations

from pathlib import Path

import click

from ..devices.fleet_setup import SetupRow, setup_fleet
from ..devices.setup import parse_runtimes
from ..errors import ExitCode, InputError
from ..fleet import FleetProgress
from ..fleet.result import all_failed_code
from ..settings import RemoteSpec
from ..untrusted import clean_text
from .common import emit_json, json_option, targets_dir_option
from .remote_options import remote_options

# Setup reaches inventory devices with their own key and base interpreter (the venv is made from it).
SETUP_EXCLUDES = ("host", "key", "python")


def _exit_code(rows: list[SetupRow]) -> int:
    failed = all_failed_code(rows)  # 3, or 4 when every device refused its host key
    if failed is not None:
        return failed
    if any(r.status == "error" or r.report is None or not r.report.ready for r in rows):
        return int(ExitCode.GATE_FAILED)
    return int(ExitCode.OK)


def _echo(line: str) -> None:
    """A line of the setup report: what the devices reported is data (edgeopt.untrusted)."""
    click.echo(clean_text(line, limit=20_000))


def _render(rows: list[SetupRow]) -> None:
    for r in rows:
        if r.report is None:
            _echo(f"{r.device}: ERROR ({r.error_kind}): {r.error}")
            continue
        rep = r.report
        _echo(f"{r.device}: {rep.summary}; {rep.message}")
        for action in rep.actions:
            _echo(f"  - {action}")
        packages = ", ".join(f"{k} {v}" for k, v in rep.packages.items() if v)
        _echo(f"  python {rep.python} ({rep.python_version}, {rep.arch}); {packages or 'no packages'}")
        for runtime, command in rep.vendor.items():
            _echo(f"  {runtime}: vendor-only, not attempted; run on the device: {command}")


@click.command("setup")
@click.argument("name", required=False)
@click.option("--devices", "selection", metavar="SELECTION", default=None,
              help="Set up many devices at once: names, tag:TAG, globs, comma-separated.")
@click.option("--runtimes", default=None, metavar="LIST",
              help="Runtimes to install, e.g. onnxruntime,ai-edge-litert [default: the device target's].")
@click.option("--offline", is_flag=True,
              help="Never let the device reach an index: the host downloads wheels and pushes them (SFTP).")
@click.option("--wheels", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Push the wheels of this host directory instead of downloading (implies --offline).")
@remote_options(with_device=False, exclude=SETUP_EXCLUDES)
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Devices set up at the same time at most [default: all].")
@targets_dir_option
@json_option
def setup_cmd(name: str | None, selection: str | None, runtimes: str | None, offline: bool, wheels: Path | None,
              remote: RemoteSpec, jobs: int | None, targets_dirs: tuple[Path, ...], as_json: bool) -> int:
    """Create a venv (--system-site-packages) on each device with numpy and its runtimes; later runs use it.

    The system Python is never modified. The venv's interpreter is recorded in <inventory>.state.json beside
    the inventory (devices.yaml itself is not rewritten). Runtimes only a vendor ships (JetPack TensorRT,
    Coral's libedgetpu) are named with their command, not attempted. Idempotent and resumable.

    Exit 0 every device ready, 1 something is left to install by hand or a device failed, 2 bad input,
    3 every device failed.
    """
    if bool(name) == bool(selection):
        raise InputError("name one device (edgeopt devices setup NAME) or select several with --devices, not both")
    with FleetProgress() as progress:
        rows = setup_fleet(selection or str(name), remote=remote, runtimes=parse_runtimes(runtimes),
                           offline=offline, wheels=wheels, targets_dirs=targets_dirs, jobs=jobs, progress=progress)
    code = _exit_code(rows)
    if as_json:
        emit_json({"devices": [r.model_dump(mode="json") for r in rows], "exit_code": code})
    else:
        _render(rows)
    return code
