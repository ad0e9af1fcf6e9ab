"""``--devices``, ``--jobs``, ``--executor``, ``--deadline``: the fleet flags, gathered into one object.

Shared by ``edgeopt fleet bench|check``, ``bench --devices``, ``devices check --devices`` and ``qualify``
(docs/fleet.md): a command decorated with :func:`fleet_options` receives ``fleet: FleetOptions`` and, when
``fleet.enabled``, runs on the fleet (:func:`edgeopt.fleet.fleet_benchmark`, ``fleet_check``). ``--jobs``,
``--executor`` and ``--deadline`` without ``--devices`` are a usage error (exit 2), except where the command
has a fleet of its own (``qualify``: its spec's devices, ``with_selection=False``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from ..errors import InputError

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class FleetOptions:
    """The fleet flags; ``devices`` None means a single-device run."""

    devices: str | None = None
    jobs: int | None = None
    executor: str = "local"
    deadline_s: float | None = None

    @property
    def enabled(self) -> bool:
        return self.devices is not None

    def as_kwargs(self) -> dict[str, Any]:
        return {"devices": self.devices, "jobs": self.jobs, "executor": self.executor, "deadline_s": self.deadline_s}


def _check(fleet: FleetOptions) -> FleetOptions:
    if not fleet.enabled and (fleet.jobs is not None or fleet.deadline_s is not None or fleet.executor != "local"):
        raise InputError("--jobs, --executor and --deadline apply to a fleet run: add --devices SELECTION "
                         "(names, tag:TAG, globs)")
    return fleet


def fleet_options(required: bool = False, with_selection: bool = True,
                  deadline_default: str = "--max-duration + 300") -> Callable[[F], F]:
    """Add the fleet flags; the command receives them as ``fleet: FleetOptions``.

    Args:
        required: ``--devices`` must be given.
        with_selection: add ``--devices`` (False: the command selects its devices itself, e.g. qualify's spec).
        deadline_default: what ``--deadline``'s help names as its default.
    """

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            fleet = FleetOptions(devices=kwargs.pop("devices", None), jobs=kwargs.pop("jobs", None),
                                 executor=kwargs.pop("executor", None) or "local",
                                 deadline_s=kwargs.pop("deadline", None))
            return f(*args, fleet=_check(fleet) if with_selection else fleet, **kwargs)

        selection = [
            click.option("--devices", metavar="SELECTION", required=required, default=None,
                         help="Inventory devices to run on at once: names, tag:TAG, globs (pi5-*), comma-separated."),
        ] if with_selection else []
        options = [
            *selection,
            click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
                         help="Devices run at the same time at most [default: all selected]."),
            click.option("--executor", metavar="local|ray|ray:auto|ray:HOST:PORT|ray://HOST:PORT", default="local",
                         show_default=True,
                         help="Where device jobs run: a thread pool here, or Ray (pip install 'edgeopt[ray]'): ray "
                              "= $RAY_ADDRESS or a local cluster for the run."),
            click.option("--deadline", type=click.FloatRange(min=0.001), default=None, metavar="SECONDS",
                         help=f"Per-device deadline from its start [default: {deadline_default}]."),
        ]
        decorated: Any = wrapper
        for option in reversed(options):
            decorated = option(decorated)
        return decorated

    return decorate
