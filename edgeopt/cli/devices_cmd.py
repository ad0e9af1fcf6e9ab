"""``edgeopt devices list`` and ``edgeopt devices check NAME | --host USER@ADDR[:PORT] | --devices SEL``."""

from __future__ import annotations

from pathlib import Path

import click

from ..devices import load_inventory
from ..devices.check import check_device
from ..errors import ExitCode, InputError
from ..runners.select import use_runner
from ..settings import RemoteSpec
from ..targets import load_registry
from .common import emit_json, json_option, targets_dir_option
from .devices_render import render_device_report, render_inventory
from .fleet_check_cmd import run_fleet_check
from .fleet_options import FleetOptions, fleet_options
from .remote_options import remote_options


@click.group()
def devices() -> None:
    """Remote devices: the inventory (devices.yaml) and readiness checks over SSH."""


@devices.command("list")
@click.option("--inventory", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Devices file [default: $EDGEOPT_INVENTORY or ./devices.yaml].")
@json_option
def list_cmd(inventory: Path | None, as_json: bool) -> None:
    """List the devices of the inventory file."""
    inv = load_inventory(inventory)
    if as_json:
        emit_json({"inventory": str(inv.source), "devices": [d.model_dump(mode="json") for d in inv.devices]})
    else:
        render_inventory(inv)


@devices.command("check")
@click.argument("name", required=False)
@click.option("--target", "-t", default=None,
              help="Check for this target's runtimes [default: the device's target; with --host: onnxruntime].")
@remote_options(with_device=False)
@fleet_options()
@targets_dir_option
@json_option
def check_cmd(name: str | None, target: str | None, remote: RemoteSpec, fleet: FleetOptions,
              targets_dirs: tuple[Path, ...], as_json: bool) -> int:
    """Probe a device: arch, OS, Python, packages, memory, disk, governor, temperature, power sensors; with
    --devices, every selected device in parallel (docs/fleet.md).

    Exit 0 ready, 1 not ready (what to install is listed), 2 bad input, 3 device unreachable (with --devices:
    every device).
    """
    if fleet.enabled:
        if name:
            raise InputError(f"a device name ({name}) and --devices {fleet.devices} both given: pick one")
        return run_fleet_check(fleet, remote, target, targets_dirs, as_json)
    if not name and not remote.host:
        raise InputError("name a device of the inventory (edgeopt devices list) or pass --host USER@ADDR[:PORT]")
    with use_runner(None, remote.replace(device=name), target) as choice:  # a named device or --host: SSH
        tgt = load_registry(extra_dirs=targets_dirs).get(choice.target) if choice.target else None
        report = check_device(choice.runner, device=name or str(remote.host), target=tgt)
    if as_json:
        emit_json(report)
    else:
        render_device_report(report)
    return int(ExitCode.OK if report.ready else ExitCode.GATE_FAILED)
