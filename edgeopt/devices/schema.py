"""Typed models of a device's SSH address and of the inventory file ``devices.yaml``.

Only values that are checked here ever reach the SSH runner, and the runner still quotes every one of them
before it puts it in a remote command line.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import InputError

DEFAULT_PYTHON = "/usr/bin/python3"
DEFAULT_KNOWN_HOSTS = Path("~/.ssh/known_hosts")
DEFAULT_WORKDIR = ".cache/edgeopt"
_HOST = re.compile(r"^(?:[A-Za-z0-9_][A-Za-z0-9_.-]*|[0-9A-Fa-f:.]+(?:%[A-Za-z0-9_.-]+)?)$")
_SAFE_PATH = re.compile(r"^[^\x00-\x1f\x7f]+$")
_TAG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class SshAddress(BaseModel):
    """Where and how to reach a device over SSH, and where the agent lives there.

    ``workdir`` may be relative: it is then taken relative to the login's home directory on the device.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = Field(description="Host name or IP address of the device (IPv6 without brackets).")
    port: int = Field(22, ge=1, le=65535, description="SSH port.")
    user: str = Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$", description="Login name on the device.")
    key: Path | None = Field(None, description="Private key file; none: ssh-agent and ~/.ssh/id_* keys.")
    python: str = Field(DEFAULT_PYTHON, description="Absolute path of the device's Python 3.8+ interpreter.")
    workdir: str = Field(DEFAULT_WORKDIR, description="Agent cache, jobs and locks on the device ('~/' allowed).")

    @field_validator("host")
    @classmethod
    def _host_ok(cls, value: str) -> str:
        if not _HOST.match(value):
            raise ValueError("write a host name or IP address (letters, digits, '.', '-', ':'), e.g. 192.168.1.50")
        return value

    @field_validator("python")
    @classmethod
    def _python_absolute(cls, value: str) -> str:
        if not _SAFE_PATH.match(value) or not PurePosixPath(value).is_absolute():
            raise ValueError("write the interpreter's absolute path on the device, e.g. /usr/bin/python3")
        return value

    @field_validator("workdir")
    @classmethod
    def _workdir_ok(cls, value: str) -> str:
        value = value[2:] if value.startswith("~/") else value
        if not value.strip() or not _SAFE_PATH.match(value) or value.startswith("~"):
            raise ValueError("write an absolute path or one relative to the login's home, e.g. .cache/edgeopt")
        return value

    def label(self) -> str:
        """``user@host:port``, as used in messages and runner names."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.user}@{host}:{self.port}"


class Device(SshAddress):
    """One named device of the inventory: its address plus the target (device class) it is."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", description="Name used with --device.")
    target: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", description="Target name (edgeopt targets), e.g. rpi5.")
    tags: list[str] = Field(default_factory=list,
                            description="Labels for selecting many devices (--devices tag:NAME), e.g. [rpi5, shelf-a].")

    @field_validator("tags")
    @classmethod
    def _tags_ok(cls, value: list[str]) -> list[str]:
        for tag in value:
            if not _TAG.match(tag):
                raise ValueError(f"tag {tag!r}: use letters, digits, '.', '_' and '-', starting with a letter or digit")
        if len(set(value)) != len(value):
            raise ValueError("a tag appears twice; list each tag once")
        return value

    def address(self, *, key: Path | None = None, python: str | None = None) -> SshAddress:
        """The SSH address, with ``--key`` / ``--python`` given on the command line taking precedence."""
        data = self.model_dump(exclude={"name", "target", "tags"})
        if key is not None:
            data["key"] = key
        if python is not None:
            data["python"] = python
        try:
            return SshAddress.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise InputError(f"--python {err.get('input')!r}: {err['msg']}") from None


class Inventory(BaseModel):
    """The devices of one ``devices.yaml`` file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    devices: list[Device] = Field(default_factory=list, description="The devices, each with a unique name.")
    source: Path | None = Field(None, exclude=True, description="The file it was loaded from (set by the loader).")

    @model_validator(mode="after")
    def _unique_names(self) -> Inventory:
        seen: set[str] = set()
        for device in self.devices:
            if device.name in seen:
                raise ValueError(f"device name '{device.name}' appears twice; names must be unique")
            seen.add(device.name)
        return self

    def names(self) -> list[str]:
        return [d.name for d in self.devices]

    def tags(self) -> list[str]:
        """Every tag used by a device, sorted."""
        return sorted({t for d in self.devices for t in d.tags})

    def get(self, name: str) -> Device:
        """The device called ``name``.

        Raises:
            InputError: no such device (the message lists the known names and the closest match).
        """
        for device in self.devices:
            if device.name == name:
                return device
        close = difflib.get_close_matches(name, self.names(), n=1, cutoff=0.6)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        where = f" in {self.source}" if self.source else ""
        raise InputError(
            f"unknown device '{name}'{hint}{where}; known devices: {', '.join(self.names()) or '(none)'}; "
            "add it to the inventory (docs/devices.md) or pass --inventory FILE"
        )
