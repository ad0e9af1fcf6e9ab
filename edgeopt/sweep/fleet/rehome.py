"""A device's sweep from a worker that did not share the host's paths, as the host keeps it (every kind).

Under Ray without shared paths the bundle reaches a device job as bytes (by content hash, :class:`ModelRef`), and the
job writes the device's sweep into the worker's temp folder: the recommendation is shipped and checked as shipped
there, and every path in the result names that worker. The host then keeps the device's sweep under its own
``<out>/devices/<name>/``: paths into the bundle name the host's bundle, paths into the worker's output name the
device's folder here, and the recommendation is re-shipped here from the host's own files. The device's shipped
check stays with it only where it re-scored the very files shipped here (every file's path, size and SHA-256,
:func:`kept_check`); otherwise it is dropped with a warning.

The LLM sweep re-ships from the host's level folders (:mod:`edgeopt.llm.sweep_fleet`); the one-pass sweep from the
host's bundle, or from the files the device built itself (the model snapshot, the INT8 search), which the job sends
back for the recommended level only (:class:`WorkerOutput`, :func:`reship`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...deploy import DeployedFile, Deployment, ShippedCheck, load_deployment, save_deployment
from ...errors import EdgeoptError, first_line
from ...fsutil import atomic_write_bytes
from ...metrics.result import BenchResult
from ...registry import files_by_suffix
from ..result import Level, SweepResult
from ..ship.deployment import RECOMMENDED_DIR, copy_files, discard, publish, recommended_level


def kept_check(deployment: Deployment, check: ShippedCheck | None, warnings: list[str]) -> ShippedCheck | None:
    """The shipped check a device ran on its own copy of ``deployment``, kept when it re-scored exactly the files
    shipped here (path, size and SHA-256 of every one); None, with the reason in ``warnings``, otherwise."""
    def files(items: Sequence[DeployedFile]) -> set[tuple[str, str, int]]:
        return {(f.path, f.sha256, f.size_bytes) for f in items}

    if check is None:
        return None
    if files(check.files) != files(deployment.files):
        warnings.append(f"shipped check of {deployment.name} dropped: the files shipped here differ from the ones "
                        "the device re-scored; re-run the sweep")
        return None
    return check


def moved(value: Any, moves: Mapping[str, str]) -> Any:
    """``value`` (plain data: dicts, lists, strings) with every string that names one of ``moves``' folders, or a
    path under one, moved to that folder's new place; other strings (warnings that quote a path) are left."""
    if isinstance(value, str):
        for old, new in moves.items():
            if value == old or value.startswith(old.rstrip("/") + "/"):
                return new + value[len(old.rstrip("/")):]
        return value
    if isinstance(value, dict):
        return {k: moved(v, moves) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(moved(v, moves) for v in value)
    return value


@dataclass(frozen=True)
class WorkerOutput:
    """What a one-pass device job on a worker that does not share the host's paths sends back beside its result.

    Attributes:
        root: the bundle's folder there. out: the device's output folder there.
        deployment: the recommendation's ``deployment.json`` as the device shipped and checked it (None: none).
        files: files under ``out`` the host needs (the recommended level's, where the device built them itself),
            by their path relative to ``out``.
    """

    root: str
    out: str
    deployment: Deployment | None = None
    files: Mapping[str, bytes] = field(default_factory=dict)

    @classmethod
    def of(cls, result: SweepResult, root: Path, out: Path) -> WorkerOutput:
        """Read on the worker once the device's sweep is done: its deployment record and, where the recommended
        level's file(s) lie in the worker's output (not in the bundle), their bytes; then its ``recommended/``
        is removed (the host ships its own)."""
        deployment = None
        files: dict[str, bytes] = {}
        rec = result.recommendation
        level = recommended_level(result.levels, rec) if rec is not None else None
        if rec is not None and rec.deployment is not None:
            with contextlib.suppress(EdgeoptError):  # unreadable: the host says so and ships nothing (reship)
                deployment, _ = load_deployment(Path(rec.deployment), check_files=False)
        if level is not None and Path(level.artifact).is_relative_to(out):
            with contextlib.suppress(OSError, ValueError, EdgeoptError):  # gone: the host's copy fails, says so
                files = {p.relative_to(out).as_posix(): p.read_bytes()
                         for p in files_by_suffix(Path(level.artifact))}
        discard(out)
        return cls(str(root), str(out), deployment, files)

    def moves(self, host_root: Path, dev_out: Path) -> dict[str, str]:
        """Worker folder -> host folder: the bundle's, the device's output."""
        return {self.root: str(host_root), self.out: str(dev_out)}


def rehome(result: SweepResult, runs: list[tuple[Level, BenchResult]], sent: WorkerOutput, host_root: Path,
           dev_out: Path, device: str) -> tuple[SweepResult, list[tuple[Level, BenchResult]]]:
    """The device's one-pass sweep from a worker that did not share our paths, as the host keeps it: its paths on
    this host (:func:`moved`; the result's and the history's), the files it sent back written under ``dev_out``,
    its recommendation re-shipped into ``dev_out/recommended`` with the device's check where the files are the
    same (:func:`reship`)."""
    moves = sent.moves(host_root, dev_out)
    for rel, data in sent.files.items():
        atomic_write_bytes(dev_out / rel, data)
    here = SweepResult.model_validate(moved(result.model_dump(), moves))
    runs = [(Level.model_validate(moved(lv.model_dump(), moves)),
             bench.model_copy(update={"model": bench.model.model_copy(update={"path": moved(bench.model.path,
                                                                                             moves)})}))
            for lv, bench in runs]
    return reship(here, sent.deployment, dev_out, device), runs


def reship(result: SweepResult, recorded: Deployment | None, dev_out: Path, device: str) -> SweepResult:
    """Write ``dev_out/recommended`` from this host's copy of the recommended level's file(s) with the device's
    deployment record (``recorded``), its files hashed here and its shipped check kept only for the same files; the
    result with the folder and the check in its recommendation (no recommendation: an old folder is removed)."""
    rec = result.recommendation
    level = recommended_level(result.levels, rec) if rec is not None else None
    warnings = list(result.warnings)
    if rec is None or level is None or recorded is None:  # none, or the device could not ship it (its warning)
        discard(dev_out)
        if rec is None:
            return result
        if rec.deployment is not None:
            warnings.append(f"{RECOMMENDED_DIR}/ not written for {rec.recipe}/{rec.runtime} on {device}: its "
                            "deployment record did not come back from the worker; re-run the sweep")
        rec = rec.model_copy(update={"deployment": None, "shipped_check": None})
        return result.model_copy(update={"recommendation": rec, "warnings": warnings})
    tmp = dev_out / f".{RECOMMENDED_DIR}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        files = copy_files(Path(level.artifact), tmp)
        deployment = recorded.model_copy(update={"files": tuple(files), "shipped_check": None})
        check = kept_check(deployment, recorded.shipped_check, warnings)
        save_deployment(tmp, deployment.model_copy(update={"shipped_check": check}))
    except (OSError, EdgeoptError) as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        discard(dev_out)
        warnings.append(f"{RECOMMENDED_DIR}/ not written for {rec.recipe}/{rec.runtime} on {device}: "
                        f"{first_line(exc)}; re-run the sweep")
        rec = rec.model_copy(update={"deployment": None, "shipped_check": None})
        return result.model_copy(update={"recommendation": rec, "warnings": warnings})
    folder = publish(tmp, dev_out)
    rec = rec.model_copy(update={"deployment": str(folder), "shipped_check": check})
    return result.model_copy(update={"recommendation": rec, "warnings": warnings})
