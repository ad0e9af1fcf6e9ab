"""The sweep's answer as a deployment: ``<out>/recommended/`` with the recommended level's file(s) and
``deployment.json`` (every setting it was measured with), written whole or not at all.

A level is measured with runtime options the model file does not carry (OpenVINO's ``inference_precision: f32``
on a CPU that runs FP32 in BF16 by default, onnxruntime's providers and graph optimisation level, the thread
count, the input shapes). The runtimes read (almost) none of these from the file (docs/sweep.md, "Deploying the
recommendation"), so the folder ships them beside it, and :mod:`.check` proves the folder alone gives the
measured retention.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._version import __version__
from ...deploy import DeployedFile, Deployment, DeploymentMeasured, decision_cpu_flags, save_deployment
from ...deploy.options import shippable_options
from ...deploy.schema import LayerRepair
from ...fsutil import sha256_file
from ...registry import files_by_suffix, format_for_suffix
from ..result import Level, Recommendation

RECOMMENDED_DIR = "recommended"


@dataclass(frozen=True)
class SweepFacts:
    """What every level of one sweep shares (the deployment's context).

    Attributes:
        target, metric, min_retention, eval_samples: as in ``sweep.json``.
        threads, streams, batch: the benchmark settings of every level.
        shapes: input name -> the shape the levels ran with (one eval sample, batch 1).
        environment: the agent's probe ``environment`` (cpu, cpu_flags).
        model_sha256: the model the sweep started from.
    """

    target: str
    metric: str
    min_retention: float
    eval_samples: int
    threads: int
    streams: int
    batch: int
    shapes: Mapping[str, Sequence[int]]
    environment: Mapping[str, Any]
    model_sha256: str
    device: str | None = None


def recommended_level(levels: Sequence[Level], rec: Recommendation) -> Level | None:
    """The level row behind ``rec`` (same recipe, runtime and artifact)."""
    return next((lv for lv in levels if (lv.recipe, lv.runtime, lv.artifact) == (rec.recipe, rec.runtime,
                                                                                  rec.artifact)), None)


def level_options(level: Level) -> dict[str, Any]:
    """Every runtime option the level ran with (older cache entries: from its details), less those naming a path
    (a cache directory given to the sweep: a deployment may not carry one, :mod:`edgeopt.deploy.options`)."""
    if level.runtime_options is not None:
        return shippable_options(level.runtime, level.runtime_options)
    return shippable_options(level.runtime, level.details.get("effective_runtime_options") or {})


def _file(folder: Path, path: Path, role: str) -> DeployedFile:
    return DeployedFile(path=path.relative_to(folder).as_posix(), sha256=sha256_file(path),
                        size_bytes=path.stat().st_size, role=role)  # type: ignore[arg-type]


def copy_files(artifact: Path, folder: Path) -> list[DeployedFile]:
    """Copy the model file and its format's companions (IR ``.bin``, ONNX external data) into ``folder``, keeping
    their names; the copies' hashes (the model first)."""
    files = files_by_suffix(artifact)
    out = []
    for k, src in enumerate(files):
        rel = src.relative_to(artifact.parent) if src.is_relative_to(artifact.parent) else Path(src.name)
        dst = folder / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
        out.append(_file(folder, dst, "model" if k == 0 else "companion"))
    return out


def build_deployment(level: Level, files: Sequence[DeployedFile], facts: SweepFacts) -> Deployment:
    """The deployment record of ``level`` (its files already copied): runtime, options, settings, measurements."""
    ranked = level.latency_rounds > 0 and level.latency_ms_round_median is not None
    env = facts.environment
    fmt = format_for_suffix(Path(files[0].path))
    measured = DeploymentMeasured(
        target=facts.target, device=facts.device, cpu=str(env.get("cpu") or ""), metric=facts.metric,
        min_retention=facts.min_retention, retention=level.retention,
        latency_ms=level.latency_ms_round_median if ranked else level.latency_ms,  # type: ignore[arg-type]
        latency_ms_low=level.latency_ms_low, latency_ms_high=level.latency_ms_high,
        latency_rounds=level.latency_rounds, size_bytes=level.size_bytes, eval_samples=facts.eval_samples)
    return Deployment(
        name=f"{level.recipe}/{level.runtime}", recipe=level.recipe, model=files[0].path,
        format=fmt.name if fmt is not None else Path(files[0].path).suffix.lstrip("."), files=tuple(files),
        runtime=level.runtime, runtime_version=level.runtime_version, runtime_options=level_options(level),
        runtime_reported=dict(level.details.get("runtime_reported") or {}),
        threads=level.threads if level.threads is not None else facts.threads, streams=facts.streams,
        batch=facts.batch, static_shapes={k: [int(d) for d in v] for k, v in facts.shapes.items()},
        cpu_flags=tuple(decision_cpu_flags(env.get("cpu_flags") or ())), source_model_sha256=facts.model_sha256,
        measured=measured, edgeopt_version=__version__,
        int8_layers=tuple(LayerRepair.model_validate(r) for r in level.details.get("int8_layers") or ()),
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


def stage_with(out: Path, fill: Callable[[Path], Deployment]) -> tuple[Path, Deployment]:
    """A fresh staging folder beside ``<out>/recommended``, filled by ``fill`` (it copies a kind's files there and
    returns their deployment record), with its ``deployment.json``; removed again when anything fails (every kind's
    sweep stages its answer here, then :func:`publish` puts it in place)."""
    tmp = out / f".{RECOMMENDED_DIR}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        deployment = fill(tmp)
        save_deployment(tmp, deployment)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp, deployment


def stage(out: Path, level: Level, facts: SweepFacts) -> tuple[Path, Deployment]:
    """A fresh staging folder beside ``<out>/recommended`` with the level's files and ``deployment.json``."""
    return stage_with(out, lambda tmp: build_deployment(level, copy_files(Path(level.artifact), tmp), facts))


def publish(tmp: Path, out: Path) -> Path:
    """Put the staged folder in place as ``<out>/recommended``, replacing an earlier one whole (rename, then drop
    the old one): a reader sees the old folder or the new one, never a mix."""
    final = out / RECOMMENDED_DIR
    old = out / f".{RECOMMENDED_DIR}.old-{os.getpid()}"
    if final.exists():
        shutil.rmtree(old, ignore_errors=True)
        final.rename(old)
    tmp.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    return final


def discard(out: Path) -> None:
    """Remove an earlier ``<out>/recommended`` (this sweep recommends nothing: no stale answer stays behind)."""
    shutil.rmtree(out / RECOMMENDED_DIR, ignore_errors=True)
