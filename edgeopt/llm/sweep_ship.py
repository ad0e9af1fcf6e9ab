"""The LLM sweep's answer as a deployment: ``<out>/recommended/`` holds the recommended level's runtime folder
(its files at the top) and ``deployment.json``, written whole or not at all (:mod:`edgeopt.sweep.ship.deployment`'s
publish). ``model`` names the file that marks the folder (its format's ``entry_file``: ``genai_config.json``,
``openvino_model.xml``); the generative runtimes load the folder that holds it. Before it is published, the staged
folder is re-scored from its files alone (:mod:`.sweep_check`, ``shipped_check``), as the one-pass sweep does.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from .._version import __version__
from ..deploy import DeployedFile, Deployment, DeploymentMeasured, ShippedCheck, save_deployment
from ..fsutil import sha256_file
from ..registry import get_format, get_runtime
from ..sweep.fleet.rehome import kept_check
from ..sweep.ship.check import record_check
from ..sweep.ship.deployment import discard, publish, stage_with
from .sweep_check import LlmShipCheck, check_llm_shipped
from .sweep_levels import STAMP
from .sweep_result import LlmSweepLevel, LlmSweepResult


def entry_file(runtime: str) -> str:
    """The file that marks the runtime's folder (its delivered format's ``entry_file``): the deployment's
    ``model``."""
    fmt = get_format(get_runtime(runtime).delivers or runtime)
    return fmt.entry_file or fmt.name


def _copy(src: Path, dst: Path, marker: str) -> list[DeployedFile]:
    files = []
    for path in sorted(p for p in src.rglob("*") if p.is_file() and p.name != STAMP):
        rel = path.relative_to(src)
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dst / rel)
        files.append(DeployedFile(path=rel.as_posix(), sha256=sha256_file(dst / rel), size_bytes=path.stat().st_size,
                                  role="model" if rel.as_posix() == marker else "companion"))
    return sorted(files, key=lambda f: f.role != "model")


def _deployment(row: LlmSweepLevel, files: list[DeployedFile], result: LlmSweepResult,
                device: str | None) -> Deployment:
    measured = DeploymentMeasured(
        target=result.target, device=device, cpu=row.cpu, metric=result.metric, min_retention=result.min_retention,
        retention=row.retention.retention, latency_ms=float(row.tpot_ms_p50 or 0.0), size_bytes=row.size_bytes,
        eval_samples=row.retention.positions, decode_tokens_per_s=row.rank_tokens_per_s, ttft_ms=row.ttft_ms_p50)
    return Deployment(
        name=f"{row.name}/{row.runtime}", recipe=row.name, model=entry_file(row.runtime),
        format=get_runtime(row.runtime).delivers or row.runtime,
        files=tuple(files), runtime=row.runtime, runtime_version=row.runtime_version,
        runtime_options=dict(row.runtime_options),
        threads=_threads(result), cpu_flags=tuple(row.cpu_flags),
        source_model_sha256=result.model_sha256, measured=measured, edgeopt_version=__version__,
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


def _threads(result: LlmSweepResult) -> int:
    """The threads every level was benched at (0: the runtime's default), as the deployment records them."""
    threads = result.workload.get("threads") or [0]
    return int(threads[0]) if len(threads) == 1 else 0


def _checked_there(tmp: Path, deployment: Deployment, check: ShippedCheck, warnings: list[str]) -> ShippedCheck | None:
    """A check already run on a copy of this folder (a fleet device's, on a worker that does not share this
    machine's paths), saved in its ``deployment.json`` when every file it re-scored is here with the same path,
    size and hash; None, with the reason in ``warnings``, otherwise (:func:`edgeopt.sweep.fleet.rehome.kept_check`,
    the one-pass fleet sweep's too)."""
    kept = kept_check(deployment, check, warnings)
    if kept is not None:
        save_deployment(tmp, deployment.model_copy(update={"shipped_check": kept}))
    return kept


def _check(tmp: Path, deployment: Deployment, result: LlmSweepResult, check: LlmShipCheck | ShippedCheck | None,
           warnings: list[str]) -> ShippedCheck | None:
    """The staged folder re-scored from its files alone (:mod:`.sweep_check`), saved in its ``deployment.json`` as
    the one-pass sweep saves its own (:func:`edgeopt.sweep.ship.check.record_check`; ``check`` a record: one
    already run on a copy of it); None, with the reason in ``warnings``, where it failed, and None where ``check``
    is None (the caller's warnings say why)."""
    if check is None:
        return None
    if isinstance(check, ShippedCheck):
        return _checked_there(tmp, deployment, check, warnings)
    run = check
    return record_check(tmp, deployment, lambda: check_llm_shipped(tmp, result.metric, run), warnings)


def ship_llm(result: LlmSweepResult, out: Path, device: str | None = None,
             check: LlmShipCheck | ShippedCheck | None = None) -> LlmSweepResult:
    """Write ``<out>/recommended`` for the result's recommendation (or remove a stale one), re-scored from its
    files alone through ``check``'s runner; the result with the deployment's path and check. ``check`` may instead
    be the record of a check run on a copy of the same files (a fleet worker's; kept when the hashes match), or
    None (not re-checked; the caller's warnings say why). ``device``: the inventory name it was measured on
    (``measured.device``)."""
    rec = result.recommendation
    if rec is None:
        discard(out)
        return result
    row = next(r for r in result.levels if (r.name, r.runtime) == (rec.name, rec.runtime))
    tmp, deployment = stage_with(
        out, lambda folder: _deployment(row, _copy(Path(row.folder), folder, entry_file(row.runtime)), result, device))
    warnings = list(result.warnings)
    try:
        shipped = _check(tmp, deployment, result, check, warnings)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    final = publish(tmp, out)
    rec = rec.model_copy(update={"deployment": str(final), "shipped_check": shipped})
    return result.model_copy(update={"recommendation": rec, "warnings": warnings})
