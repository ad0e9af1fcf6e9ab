"""What :func:`edgeopt.sweep` hands the entry of a model's kind (``KindDescriptor.sweep_api``): the typed settings
the keywords built (or were given), and where to run, in one argument shape for every kind."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..runners import Runner
from ..settings import MeasureSettings, RemoteSpec
from .levels import Progress
from .options import SweepOptions


@dataclass(frozen=True)
class SweepRequest:
    """One sweep as asked: ``options`` (what to sweep, the threshold, the data), ``measure`` (every level's
    benchmark), and the device."""

    options: SweepOptions
    measure: MeasureSettings
    remote: RemoteSpec | None = None
    target: str | None = None
    runner: Runner | None = None
    progress: Progress | None = None
    targets_dirs: Sequence[Path] = ()
