"""What ``edgeopt devices setup`` made on each device, recorded beside the inventory so later runs use it.

``devices.yaml`` is the user's file and is never rewritten. Setup records the venv interpreter it created in a
machine-written sidecar, ``devices.state.json`` next to it (``<inventory stem>.state.json``), and
:func:`apply_setup_state` (called by the inventory loader) uses that interpreter for a device whose
``devices.yaml`` entry names no ``python:`` and whose address (user, host, port, work dir) is still the one
that was set up. An explicit ``python:`` in ``devices.yaml`` and ``--python`` always win.

Writes are atomic (temp file + rename) and serialized with a lock file, so several devices set up in parallel
never lose each other's record.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InputError
from ..inbound import read_json
from ..untrusted import for_json
from .schema import Device

STATE_VERSION = 1


class SetupRecord(BaseModel):
    """One provisioned device: where it is and the interpreter setup made there."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user: str = Field(description="Login name the setup used.")
    host: str = Field(description="Host name or address the setup used.")
    port: int = Field(description="SSH port the setup used.")
    workdir: str = Field(description="The device's work dir as written in the inventory.")
    python: str = Field(description="Absolute path of the venv interpreter setup created on the device.")
    base_python: str = Field(description="The system interpreter the venv was made from.")
    python_version: str = Field(description="Python version of the venv.")
    arch: str = Field(description="Machine architecture (uname -m).")
    packages: dict[str, str | None] = Field(default_factory=dict, description="numpy and runtimes: version or null.")
    updated_at: str = Field(description="UTC ISO-8601 time of the setup run that wrote this record.")

    def matches(self, device: Device) -> bool:
        """True while the inventory still points ``device`` at the machine and work dir that was set up."""
        return (self.user, self.host, self.port, self.workdir) == (device.user, device.host, device.port,
                                                                   device.workdir)


class SetupState(BaseModel):
    """The sidecar file: device name -> record."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(default=STATE_VERSION, description="Format version of this file.")
    devices: dict[str, SetupRecord] = Field(default_factory=dict, description="Records by inventory device name.")


def state_path(inventory: Path) -> Path:
    """``devices.yaml`` -> ``devices.state.json`` in the same directory."""
    inventory = Path(inventory)
    return inventory.with_name(f"{inventory.stem}.state.json")


def read_state(path: Path) -> SetupState:
    """The sidecar's records (empty when the file does not exist).

    Raises:
        InputError: the file exists but is not a valid state file (the message says how to recover).
    """
    try:
        data = read_json(Path(path))
    except FileNotFoundError:
        return SetupState()
    except OSError as exc:
        raise InputError(f"{path}: cannot read the device setup state ({exc})") from None
    except ValueError as exc:
        raise InputError(f"{path}: not a valid device setup state ({exc}); delete it and run "
                         "'edgeopt devices setup' again") from None
    try:
        return SetupState.model_validate(data)
    except (ValueError, ValidationError) as exc:
        first = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise InputError(f"{path}: not a valid device setup state ({' '.join(first.split())}); delete it and run "
                         "'edgeopt devices setup' again") from None


def apply_setup_state(devices: list[Device], inventory: Path) -> list[Device]:
    """``devices`` with the recorded venv interpreter for each one that has no explicit ``python:``."""
    state = read_state(state_path(inventory))
    if not state.devices:
        return devices
    out = []
    for device in devices:
        record = state.devices.get(device.name)
        if record is not None and "python" not in device.model_fields_set and record.matches(device):
            device = device.model_copy(update={"python": record.python})
        out.append(device)
    return out


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    lock = path.with_name(f".{path.name}.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def write_record(inventory: Path, name: str, record: SetupRecord) -> Path:
    """Add or replace ``name``'s record in the sidecar (atomically); returns the sidecar's path."""
    path = state_path(inventory)
    with _locked(path):
        state = read_state(path)
        devices = {**state.devices, name: record}
        text = for_json(SetupState(devices=dict(sorted(devices.items()))).model_dump_json(indent=2)) + "\n"
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    return path


def now_iso() -> str:
    """The current UTC time, ISO-8601 to the second."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
