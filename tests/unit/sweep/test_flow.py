"""The one sweep flow (``edgeopt.sweep.flow``): a kind's plan runs in the skeleton's order, whatever its kind.

A throwaway plan (its own result model, no model kind named anywhere) goes through :func:`run_sweep_flow` on the
real local runner: its steps run once each in the skeleton's order (prepare before the runner is placed, measure
and recommend inside its session, ship after the session, history, then ``sweep.json``), ``sweep.json`` is the
plan's ``dump`` of the result with the history's outcome in it, and a history that cannot be written is one line
in the result's warnings, never the sweep's answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from edgeopt.runners import Runner
from edgeopt.runners.local import LocalRunner
from edgeopt.sweep.flow import Placement, record_history, run_sweep_flow


class ToyResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    model_sha256: str
    out_dir: str
    best: str
    shipped: bool = False
    history_run_ids: list[int] = []
    warnings: list[str] = []


@dataclass
class ToyPlan:
    out: Path
    history_db: Path | None = None
    steps: list[str] = field(default_factory=list)
    in_session: bool = False

    def prepare(self) -> None:
        self.steps.append("prepare")

    def session(self, runner: Runner) -> AbstractContextManager[Runner]:
        @contextmanager
        def opened() -> Iterator[Runner]:
            self.in_session = True
            yield runner
            self.in_session = False
        return opened()

    def measure(self, placed: Placement) -> dict[str, float]:
        self.steps.append(f"measure in_session={self.in_session} device={placed.device}")
        return {"a": 2.0, "b": 1.0}

    def recommend(self, measured: dict[str, float]) -> ToyResult:
        self.steps.append(f"recommend in_session={self.in_session}")
        return ToyResult(model_sha256="0" * 64, out_dir=str(self.out), best=min(measured, key=measured.__getitem__))

    def ship(self, measured: dict[str, float], result: ToyResult, placed: Placement) -> ToyResult:
        self.steps.append(f"ship in_session={self.in_session}")
        return result.model_copy(update={"shipped": True})

    def history(self, measured: dict[str, float], device: str | None) -> tuple[list[object], str | None]:
        self.steps.append("history")
        return [], device

    def dump(self, result: ToyResult) -> str:
        self.steps.append("dump")
        return result.model_dump_json(indent=2) + "\n"


def test_a_plan_runs_in_the_skeletons_order_and_its_dump_is_sweep_json(tmp_path: Path):
    plan = ToyPlan(tmp_path)
    result = run_sweep_flow(plan, runner=LocalRunner())  # type: ignore[arg-type]
    assert plan.steps == ["prepare", "measure in_session=True device=None", "recommend in_session=True",
                          "ship in_session=False", "history", "dump"]
    assert (result.best, result.shipped) == ("b", True)
    assert json.loads((tmp_path / "sweep.json").read_text()) == result.model_dump(mode="json")


def test_a_history_that_cannot_be_written_is_a_warning_in_sweep_json(tmp_path: Path):
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the history's folder should be")
    plan = ToyPlan(tmp_path, history_db=blocked / "history.db")
    result = run_sweep_flow(plan, runner=LocalRunner())  # type: ignore[arg-type]
    assert result.history_run_ids == []
    assert len(result.warnings) == 1 and "levels not recorded in the history" in result.warnings[0]
    assert json.loads((tmp_path / "sweep.json").read_text())["warnings"] == result.warnings


def test_no_history_leaves_the_result_as_it_was():
    result = ToyResult(model_sha256="0" * 64, out_dir=".", best="b")
    assert record_history(result, [], None) is result
