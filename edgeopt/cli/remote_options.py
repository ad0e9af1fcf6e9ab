"""The remote-device flags shared by ``bench``, ``sweep`` and ``devices check``, gathered into a ``RemoteSpec``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..devices.loader import DEFAULT_INVENTORY
from ..devices.schema import DEFAULT_KNOWN_HOSTS
from ..settings import RemoteSpec, build

F = TypeVar("F", bound=Callable[..., Any])
# RemoteSpec fields that are flags (the timeouts are a Python API option).
_FLAGS = ("host", "device", "inventory", "key", "python", "known_hosts", "accept_new_host_key")


def remote_options(with_device: bool = True) -> Callable[[F], F]:
    """Add the remote flags to a command; the command receives them as ``remote: RemoteSpec``."""

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            flags = {name: kwargs.pop(name, None) for name in _FLAGS}
            remote = build(RemoteSpec, {**flags, "accept_new_host_key": bool(flags["accept_new_host_key"])})
            return f(*args, remote=remote, **kwargs)

        options = [
            click.option("--host", metavar="USER@ADDR[:PORT]", default=None,
                         help="Run on this device over SSH (e.g. pi@192.168.1.50)."),
            *([click.option("--device", metavar="NAME", default=None,
                            help="Run on this device of the inventory (edgeopt devices list).")]
              if with_device else []),
            click.option("--inventory", type=click.Path(dir_okay=False, path_type=Path), default=None,
                         help=f"Devices file [default: $EDGEOPT_INVENTORY or ./{DEFAULT_INVENTORY}]."),
            click.option("--key", type=click.Path(dir_okay=False, path_type=Path), default=None,
                         help="SSH private key [default: ssh-agent and ~/.ssh/id_* keys]."),
            click.option("--python", metavar="PATH", default=None,
                         help="Absolute interpreter path on the device [default: /usr/bin/python3]."),
            click.option("--known-hosts", type=click.Path(dir_okay=False, path_type=Path), default=None,
                         help=f"Trusted host keys [default: {DEFAULT_KNOWN_HOSTS}]."),
            click.option("--accept-new-host-key", is_flag=True,
                         help="Trust and record the key of a host seen for the first time (verify its fingerprint)."),
        ]
        decorated: Any = wrapper
        for option in reversed(options):
            decorated = option(decorated)
        return decorated

    return decorate
