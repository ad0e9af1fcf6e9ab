"""What ``edgeopt bench`` hands the entry of a model's kind (``KindDescriptor.bench_cli``): every parsed option in
one typed object, so each kind's entry takes the same argument shape ``(kind, call)``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..deploy.use import DeploymentConflictError
from ..errors import InputError
from ..settings import RemoteSpec
from .fleet_options import FleetOptions
from .history_options import HistoryOptions
from .sink_options import MlflowTarget


@dataclass(frozen=True)
class BenchCall:
    """The bench command's options, as parsed (names as the command's parameters)."""

    model: Path
    target: str | None
    measure: dict[str, Any]
    no_budget: bool
    threads: list[int]
    batches: list[int]
    html: Path | None
    runtime_flags: dict[str, dict[str, Any]]
    samples: bool
    targets_dirs: tuple[Path, ...]
    as_json: bool
    remote: RemoteSpec
    history: HistoryOptions
    fleet: FleetOptions
    mlflow: MlflowTarget | None
    override_deployment: bool
    # The model's kind's workload model built from its own flags (edgeopt/cli/kind_flags.py: --prompt-tokens ...)
    # and the shared settings of the same names; None when its workload model declares no flag.
    settings: Any = None
    workload: tuple[str, ...] = ()  # --workload KEY=VALUE (a plug-in kind's workload)

    def refuse_workload(self) -> None:
        """``--workload`` is a plug-in kind's; refused for a kind with a workload of its own flags.

        Raises:
            InputError: ``--workload`` was given.
        """
        if self.workload:
            raise InputError(f"--workload sets a plug-in model kind's workload and {self.model} is not such a "
                             "model: drop it (docs/bench.md)")


def check_deployment_run(model: Path, *, fleet: bool, tradeoff: bool) -> None:
    """A deployment is benched as one run on one device: --devices and --threads/--batch lists are refused."""
    if fleet:
        raise InputError(f"{model}: a deployment runs on one device here (--host/--device); bench its model file "
                         "with --devices, or qualify the deployment on many devices (docs/qualify.md)")
    if tradeoff:
        raise DeploymentConflictError(f"--threads/--batch lists contradict deployment {model}: it runs its own "
                                      "threads and batch; bench its model file to sweep them")
