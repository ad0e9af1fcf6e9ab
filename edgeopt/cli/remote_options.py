"""The remote-device flags shared by ``bench``, ``sweep`` and ``devices check``, gathered into a ``RemoteSpec``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..devices.loader import DEFAULT_INVENTORY
from ..devices.schema import DEFAULT_KNOWN_HOSTS
from ..errors import InputError
from ..settings import RemoteSpec, SshTimeouts, build

F = TypeVar("F", bound=Callable[..., Any])
# RemoteSpec fields that are flags.
_FLAGS = ("host", "device", "inventory", "key", "python", "known_hosts", "accept_new_host_key", "device_cache_mb")
# --ssh-timeout STEP=SECONDS names: the SshTimeouts fields without their ``_s``.
TIMEOUT_STEPS = tuple(name.removesuffix("_s") for name in SshTimeouts.model_fields)


def parse_timeouts(pairs: tuple[str, ...]) -> SshTimeouts | None:
    """``("connect=5", "upload=300")`` as :class:`SshTimeouts` (defaults for the rest); none given is None.

    Raises:
        InputError: not ``STEP=SECONDS``, an unknown step, or a value that is not a positive number.
    """
    if not pairs:
        return None
    values: dict[str, str] = {}
    for pair in pairs:
        step, sep, seconds = pair.partition("=")
        if not sep or step.strip() not in TIMEOUT_STEPS:
            raise InputError(f"--ssh-timeout {pair!r}: expected STEP=SECONDS with STEP one of "
                             f"{', '.join(TIMEOUT_STEPS)}; e.g. --ssh-timeout connect=5")
        values[f"{step.strip()}_s"] = seconds.strip()
    return build(SshTimeouts, values)


def remote_options(with_device: bool = True, exclude: tuple[str, ...] = ()) -> Callable[[F], F]:
    """Add the remote flags to a command; the command receives them as ``remote: RemoteSpec``.

    Args:
        with_device: add ``--device`` (False: the command selects devices itself).
        exclude: RemoteSpec flags the command does not take (e.g. ``devices setup``: ``host``, ``key``, ``python``).
    """

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            flags = {name: kwargs.pop(name, None) for name in _FLAGS}
            flags = {k: v for k, v in flags.items() if not (k == "device_cache_mb" and v is None)}
            timeouts = parse_timeouts(tuple(kwargs.pop("ssh_timeout", None) or ()))
            remote = build(RemoteSpec, {**flags, "accept_new_host_key": bool(flags["accept_new_host_key"]),
                                        "timeouts": timeouts})
            return f(*args, remote=remote, **kwargs)

        path = click.Path(dir_okay=False, path_type=Path)
        every = {
            "host": click.option("--host", metavar="USER@ADDR[:PORT]", default=None,
                                 help="Run on this device over SSH (e.g. pi@192.168.1.50)."),
            "device": click.option("--device", metavar="NAME", default=None,
                                   help="Run on this device of the inventory (edgeopt devices list)."),
            "inventory": click.option("--inventory", type=path, default=None,
                                      help=f"Devices file [default: $EDGEOPT_INVENTORY or ./{DEFAULT_INVENTORY}]."),
            "key": click.option("--key", type=path, default=None,
                                help="SSH private key [default: ssh-agent and ~/.ssh/id_* keys]."),
            "python": click.option("--python", metavar="PATH", default=None,
                                   help="Absolute interpreter path on the device [default: /usr/bin/python3]."),
            "known_hosts": click.option("--known-hosts", type=path, default=None,
                                        help=f"Trusted host keys [default: {DEFAULT_KNOWN_HOSTS}]."),
            "accept_new_host_key": click.option(
                "--accept-new-host-key", is_flag=True,
                help="Trust and record the key of a host seen for the first time (verify its fingerprint)."),
            "timeouts": click.option(
                "--ssh-timeout", metavar="STEP=SECONDS", multiple=True,
                help=f"Deadline of one SSH step (repeatable); STEP is one of {', '.join(TIMEOUT_STEPS)} "
                     "[defaults: docs/devices.md]."),
            "device_cache_mb": click.option(
                "--device-cache-mb", type=float, default=None,
                help="Size limit of the device's model cache; least recently used entries are evicted "
                     "[default: 2048]."),
        }
        skip = {*exclude, *(() if with_device else ("device",))}
        options = [option for name, option in every.items() if name not in skip]
        decorated: Any = wrapper
        for option in reversed(options):
            decorated = option(decorated)
        return decorated

    return decorate
