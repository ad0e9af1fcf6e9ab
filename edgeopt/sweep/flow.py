"""One single-device sweep flow for every model kind (issue 30, "one sweep"): the skeleton here, each kind's steps
in its :class:`SweepPlan`.

The skeleton, the same for every kind:

1. ``prepare``: the inputs checked and, where the kind builds its levels before measuring (an LLM's exports), the
   levels built, before a runner is placed;
2. placement: :func:`~edgeopt.runners.select.use_runner` (local, ``--host``/``--device``, or a given runner) and the
   device's name for the deployment and the history (:func:`device_name`);
3. the kind's measuring session on that runner (``session``: the one-pass sweep's served agent, or the runner
   itself), in which ``measure`` scores and benches every level and ranks the passing ones in interleaved rounds,
   and ``recommend`` decides, draws the frontier plot and returns the kind's result;
4. ``ship``: ``<out>/recommended/`` staged, re-checked as shipped from its files alone through the runner
   (:mod:`.ship`), and published whole;
5. the history: every freshly measured level recorded as a ``sweep`` run (:func:`record_history`; a history that
   cannot be written is a warning, never the sweep's answer);
6. ``<out>/sweep.json`` written atomically from the kind's ``dump``.

Steps 3-4 are :func:`measure_on` (what a fleet device runs: its host keeps the history and ``sweep.json``); the whole
of it is :func:`run_sweep_flow`. The one-pass sweep's plan is :class:`edgeopt.sweep.run.OnePassSweep`, the LLM
sweep's :class:`edgeopt.llm.sweep.LlmSweep`; this module never asks which kind a model is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from ..fsutil import atomic_write_text
from ..runners import Runner, RunnerKind
from ..runners.select import use_runner
from ..settings import RemoteSpec

if TYPE_CHECKING:
    from ..history.sweep_runs import SweptLevel

SWEEP_JSON = "sweep.json"


class SweepRecord(Protocol):
    """What the flow reads of a kind's sweep result (both results are frozen pydantic models)."""

    @property
    def model_sha256(self) -> str: ...

    @property
    def out_dir(self) -> str: ...

    @property
    def warnings(self) -> list[str]: ...

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Any: ...


M = TypeVar("M")  # the kind's measured state, between its steps
Res = TypeVar("Res", bound=SweepRecord)


@dataclass(frozen=True)
class Placement:
    """Where a sweep measures, as its plan's steps see it.

    Attributes:
        runner: the placed runner (its ``name`` is the result's ``runner``).
        served: what the measurements go through: the kind's session (a served agent) or ``runner`` itself.
        target: the placed target (None: the runner's default, ``local``).
        device: the inventory device's name, else its address; None: local (the deployment's ``measured.device``).
    """

    runner: Runner
    served: Runner
    target: str | None
    device: str | None


class SweepPlan(Protocol[M, Res]):
    """A kind's steps of the sweep (see the module's docstring for the order the flow runs them in)."""

    @property
    def history_db(self) -> str | Path | None:
        """Where the measured levels are recorded (None: not recorded)."""

    def prepare(self) -> None:
        """Check the inputs; build the levels a kind builds before measuring (no runner placed yet)."""

    def session(self, runner: Runner) -> AbstractContextManager[Runner]:
        """The runner the measurements go through while the levels are measured and ranked."""

    def measure(self, placed: Placement) -> M:
        """Score and bench every level on ``placed``, and rank the passing ones in interleaved rounds."""

    def recommend(self, measured: M) -> Res:
        """The recommendation (or the binding constraint), the frontier plot: the kind's result, not shipped yet."""

    def ship(self, measured: M, result: Res, placed: Placement) -> Res:
        """``<out>/recommended/`` for the recommendation, checked as shipped: the result with its deployment."""

    def history(self, measured: M, device: str | None) -> tuple[Sequence[SweptLevel], str | None]:
        """The freshly measured levels as the history keeps them, and the device label to record them under
        (``device``: :attr:`Placement.device`)."""

    def dump(self, result: Res) -> str:
        """``sweep.json``'s text."""


@dataclass(frozen=True)
class Swept(Generic[M, Res]):
    """One sweep measured on a runner: the kind's state and its shipped result."""

    measured: M
    result: Res


def device_name(remote: RemoteSpec | None, runner: Runner) -> str | None:
    """The inventory name of the device a sweep runs on, else its address (``user@host:port``); None: local."""
    if remote is not None and remote.device:
        return remote.device
    info = runner.describe()
    return info.address if info.kind == RunnerKind.REMOTE else None


def measure_on(plan: SweepPlan[M, Res], runner: Runner, target: str | None, device: str | None) -> Swept[M, Res]:
    """Steps 3-4 on ``runner``: every level measured and ranked in the plan's session, the recommendation, the
    frontier plot, ``recommended/`` shipped and checked (the history and ``sweep.json`` are the caller's)."""
    with plan.session(runner) as served:
        placed = Placement(runner, served, target, device)
        measured = plan.measure(placed)
        result = plan.recommend(measured)
    return Swept(measured, plan.ship(measured, result, placed))


def record_history(result: Res, levels: Sequence[SweptLevel], history_db: str | Path | None, *,
                   device: str | None = None, group_id: str | None = None) -> Res:
    """Every freshly measured level as a ``sweep`` run in ``history_db`` (grouped by this sweep, or ``group_id``: a
    fleet run's id), their ids in the result's ``history_run_ids``; a history that cannot be written is a line in
    its warnings (None: the result as it was)."""
    if history_db is None:
        return result
    from ..history.sweep_runs import record_or_warn

    warnings = list(result.warnings)
    ids = record_or_warn(history_db, levels, warnings, model_sha256=result.model_sha256, device=device,
                         group_id=group_id)
    return result.model_copy(update={"history_run_ids": ids, "warnings": warnings})


def save_sweep(text: str, out: Path | str) -> Path:
    """``<out>/sweep.json``, written whole or not at all."""
    path = Path(out) / SWEEP_JSON
    atomic_write_text(path, text)
    return path


def run_sweep_flow(plan: SweepPlan[M, Res], *, runner: Runner | None = None, remote: RemoteSpec | None = None,
                   target: str | None = None) -> Res:
    """The whole sweep of one model on one device (the module's steps 1-6); the result, also in ``sweep.json``.

    Raises:
        InputError: what the plan refuses in its inputs (exit 2). RunnerError: the device or a runtime failed (3).
    """
    plan.prepare()
    with use_runner(runner, remote, target) as placed:
        device = device_name(remote, placed.runner)
        swept = measure_on(plan, placed.runner, placed.target, device)
    levels, label = plan.history(swept.measured, device)
    result = record_history(swept.result, levels, plan.history_db, device=label)
    save_sweep(plan.dump(result), result.out_dir)
    return result
