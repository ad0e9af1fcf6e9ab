"""Running a deployment: its files and exactly its settings, so that what is measured is what shipped (issue 21).

``bench``, ``profile`` and ``qualify`` accept a deployment folder (or its ``deployment.json``) wherever they take a
model. :func:`open_deployment` checks the record and every file's hash; :func:`deployed_settings` applies the
runtime, runtime options, threads, streams, batch and static shapes, :func:`deployed_workload` the kind's
workload settings it recorded, and each refuses a setting given explicitly that contradicts them (unless
``override``); :func:`deployment_mismatch` names what differs between the measuring
machine and this one (runtime version, the CPU flags that change kernels), which a bench reports as a warning and
qualify as its ``deployment_match`` gate.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from ..fsutil import sha256_file
from ..metrics.result import BenchResult, DeploymentRef
from ..settings import MeasureSettings
from .io import DeploymentError, is_deployment, load_deployment
from .schema import Deployment, decision_cpu_flags
from .workload import normalized, recorded_workload

# The settings a deployment fixes, with the flag that sets each on the command line.
DEPLOYED_SETTINGS: dict[str, str] = {
    "runtime": "--runtime", "runtime_options": "--runtime-option", "threads": "--threads", "streams": "--streams",
    "batch": "--batch", "shapes": "--shape",
}
OVERRIDE_FLAG = "--override-deployment"


class DeploymentConflictError(DeploymentError):
    """A setting given explicitly that contradicts the deployment's (exit 2): it would measure something else."""


@dataclass(frozen=True)
class DeploymentUse:
    """A checked deployment: the record, its folder, and the file a runtime loads."""

    deployment: Deployment
    folder: Path
    record: Path

    @property
    def model_path(self) -> Path:
        """The file the runtime loads (its companions lie beside it, as measured)."""
        return self.folder / self.deployment.model

    def ref(self) -> DeploymentRef:
        """What a result records about the deployment it ran."""
        return DeploymentRef(path=str(self.folder), name=self.deployment.name, sha256=sha256_file(self.record))

    def values(self) -> dict[str, Any]:
        """The deployment's settings, by :class:`MeasureSettings` field name."""
        d = self.deployment
        return {"runtime": d.runtime, "runtime_options": dict(d.runtime_options), "threads": d.threads,
                "streams": d.streams, "batch": d.batch, "shapes": {k: list(v) for k, v in d.static_shapes.items()}}


def open_deployment(path: str | Path) -> DeploymentUse | None:
    """The checked deployment at ``path`` (a folder with ``deployment.json``, or that file); None for a model.

    Raises:
        DeploymentError: a broken record, or a file missing or changed since it was measured (exit 2).
    """
    if not is_deployment(Path(path)):
        return None
    deployment, folder = load_deployment(Path(path))
    return DeploymentUse(deployment, folder, folder / "deployment.json")


def _same(key: str, given: Any, deployed: Any) -> bool:
    """Whether an explicit value says the same as the deployment (runtime options: each given one matches)."""
    if key == "runtime_options":
        return all(k in deployed and str(deployed[k]) == str(v) for k, v in dict(given).items())
    return bool(given == deployed)


def explicit_settings(settings: MeasureSettings) -> set[str]:
    """The deployed settings that differ from the defaults: what a Python caller gave (the CLI knows exactly)."""
    defaults = MeasureSettings()
    return {k for k in DEPLOYED_SETTINGS if getattr(settings, k) != getattr(defaults, k)}


def deployed_settings(use: DeploymentUse, settings: MeasureSettings, *, given: Collection[str] | None = None,
                      override: bool = False, names: Mapping[str, str] | None = None,
                      override_hint: str = f"{OVERRIDE_FLAG} (override_deployment=True)") -> MeasureSettings:
    """``settings`` with the deployment's runtime, options, threads, streams, batch and shapes.

    Args:
        use: the opened deployment.
        settings: what the caller asked for.
        given: the settings the caller set explicitly (None: those that differ from the defaults).
        override: let the given settings win over the deployment's (it then measures something else).
        names, override_hint: how the error names a setting (default: its flag) and the way to override.

    Raises:
        DeploymentConflictError: a given setting that contradicts the deployment, without ``override``.
    """
    explicit = explicit_settings(settings) if given is None else set(given) & set(DEPLOYED_SETTINGS)
    changes = deployed_values(use, {key: getattr(settings, key) for key in explicit}, override=override,
                              names=names, override_hint=override_hint)
    return settings.replace(**changes)


def deployed_values(use: DeploymentUse, given: Mapping[str, Any], *, override: bool = False,
                    names: Mapping[str, str] | None = None,
                    override_hint: str = f"{OVERRIDE_FLAG} (override_deployment=True)") -> dict[str, Any]:
    """The deployment's settings (by :data:`DEPLOYED_SETTINGS` key) with each ``given`` one checked against them:
    one that agrees changes nothing, one that contradicts is refused (or wins, with ``override``). Every model kind
    applies a deployment through here (a one-pass bench's :class:`MeasureSettings`, an LLM bench's workload).

    Raises:
        DeploymentConflictError: a given setting that contradicts the deployment, without ``override``.
    """
    deployed = use.values()
    changes = dict(deployed)
    for key in sorted(given):
        value = given[key]
        if _same(key, value, deployed[key]):
            continue
        if not override:
            label = {**DEPLOYED_SETTINGS, **(names or {})}[key]
            raise DeploymentConflictError(
                f"{label} {_text(key, value)} contradicts deployment "
                f"{use.record} ({key} {_text(key, deployed[key])}): drop it to run what was measured, or "
                f"use {override_hint} to measure something else")
        changes[key] = {**deployed[key], **value} if key == "runtime_options" else value
    return changes


WORKLOAD_LABEL = "--workload {key}={value}"  # how a conflict names a given workload setting (qualify: its spec key)


def deployed_workload(use: DeploymentUse, model: type[BaseModel] | None, given: Mapping[str, Any], *,
                      override: bool = False, label: str = WORKLOAD_LABEL,
                      override_hint: str = f"{OVERRIDE_FLAG} (override_deployment=True)") -> dict[str, Any]:
    """The workload a run of the deployment applies: the one it recorded (its kind's workload ``model`` fills in the
    defaults), each ``given`` setting checked against it: one that agrees changes nothing, one that contradicts is
    refused (or wins, with ``override``). A deployment that records no workload (written before the field) applies
    ``given`` as is, as before; so does a kind that takes none (``model`` None). A value the model refuses is passed
    on for the command to report. Every kind's engine applies a deployment's workload through here.

    Args:
        use: the opened deployment.
        model: the kind's workload settings model (:meth:`KindDescriptor.load_workload`).
        given: the workload settings the caller set explicitly, by field name (CLI strings or typed values).
        override, override_hint: as :func:`deployed_values`.
        label: how the error names a given setting (``{key}`` and ``{value}`` are filled in).

    Raises:
        DeploymentConflictError: a given setting that contradicts the deployment's, without ``override`` (exit 2).
    """
    if use.deployment.workload is None or model is None:
        return dict(given)
    deployed = recorded_workload(use.deployment, model)
    out = dict(deployed)
    for key in sorted(given):
        value = given[key]
        got = normalized(model, deployed, key, value) if key in deployed else None
        if got is not None and got != deployed[key] and not override:
            raise DeploymentConflictError(
                f"{label.format(key=key, value=_text('workload', value))} contradicts deployment {use.record} "
                f"(workload.{key} {_text('workload', deployed[key])}): drop it to run what was measured, or use "
                f"{override_hint} to measure something else")
        out[key] = value
    return out


def _text(key: str, value: Any) -> str:
    if key == "runtime_options":
        return ",".join(f"{k}={v}" for k, v in dict(value).items()) or "{}"
    if key == "shapes":
        return ",".join(f"{k}={'x'.join(str(d) for d in v)}" for k, v in dict(value).items()) or "{}"
    if key == "workload" and isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def deployment_mismatch(deployment: Deployment, runtime_version: str, cpu_flags: Iterable[str]) -> list[str]:
    """What differs between the machine that measured ``deployment`` and the one that ran it (empty: nothing).

    The runtime version and the CPU features that change kernels (:data:`~.schema.DECISION_CPU_FLAGS`): another
    OpenVINO version or a CPU without ``avx512_bf16`` computes other numbers than the deployment was chosen on.
    """
    problems: list[str] = []
    if runtime_version and runtime_version != deployment.runtime_version:
        problems.append(f"runtime {deployment.runtime} {runtime_version} != {deployment.runtime_version} measured")
    here, recorded = set(decision_cpu_flags(cpu_flags)), set(deployment.cpu_flags)
    if recorded - here:
        problems.append(f"cpu lacks {', '.join(sorted(recorded - here))}")
    if here - recorded:
        problems.append(f"cpu adds {', '.join(sorted(here - recorded))}")
    return problems


def mismatch_of(use: DeploymentUse, bench: BenchResult) -> list[str]:
    """:func:`deployment_mismatch` of a bench result (its runtime version and the agent's CPU flags)."""
    return deployment_mismatch(use.deployment, bench.runtime.version, bench.environment.get("cpu_flags") or [])


def mismatch_text(use: DeploymentUse, problems: list[str]) -> str:
    """One line: which deployment, and what differs."""
    return f"deployment {use.deployment.name!r} was measured elsewhere: {'; '.join(problems)}"


def mark_result(use: DeploymentUse, bench: BenchResult) -> BenchResult:
    """``bench`` with the deployment it ran and, when this machine differs from the measuring one, a warning."""
    return mark_any(use, bench, bench.runtime.version, bench.environment.get("cpu_flags") or [])


R = TypeVar("R", bound=BaseModel)


def mark_any(use: DeploymentUse, result: R, runtime_version: str, cpu_flags: Iterable[str]) -> R:
    """Any kind's result (a model with ``deployment`` and ``warnings`` fields) with the deployment it ran and, when
    this machine's runtime version or kernel-relevant CPU flags differ from the measuring one's, a warning."""
    problems = deployment_mismatch(use.deployment, runtime_version, cpu_flags)
    warnings = list(getattr(result, "warnings", []))
    if problems:
        warnings.append(mismatch_text(use, problems))
    return result.model_copy(update={"deployment": use.ref(), "warnings": warnings})
