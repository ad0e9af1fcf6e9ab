"""``edgeopt bench out/manifest.json``: benchmark every artifact an ``optimize`` run delivered.

Each artifact's runtime comes from its format (:mod:`edgeopt.registry.lookup`) and the target; an artifact that cannot
run where the agent runs is skipped with the reason (a TensorRT ONNX without TensorRT here, Core ML off macOS,
a runtime that is not installed, a format the target has no runtime for). Every other artifact goes through
:func:`edgeopt.benchmark` with the same measurement settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InputError
from ..inbound import read_json
from ..metrics.result import BenchResult
from ..passes.base import Artifact, ArtifactFormat
from ..registry import find_runtime, get_format, loaders
from ..registry.lookup import ModelFormat, choose_runtime
from ..runners import ProgressSink, Runner
from ..settings import MeasureSettings, RemoteSpec, split_options
from ..targets import Target, load_registry
from .api import run_benchmark


class ManifestBenchEntry(BaseModel):
    """One artifact of the manifest: its benchmark result, or why it was not benchmarked."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    artifact: str = Field(description="Artifact name in the manifest, e.g. '2-quantize_int8'.")
    format: ArtifactFormat
    path: str = Field(description="The file benchmarked (resolved against the manifest's directory).")
    size_bytes: int = Field(description="Artifact size on disk, from the manifest.")
    runtime: str | None = Field(description="Agent runtime used; None when skipped before one was chosen.")
    result: BenchResult | None = Field(description="The benchmark; None when skipped.")
    skipped_reason: str | None = Field(description="Why the artifact was not benchmarked; None when it was.")

    @property
    def failed(self) -> bool:
        """Benchmarked and either invalid or over its budget."""
        return self.result is not None and not self.result.passed


def load_manifest_artifacts(manifest_path: str | Path) -> tuple[str | None, list[Artifact]]:
    """(target name, artifacts) of an ``optimize`` manifest.

    Raises:
        InputError: the file is missing, not JSON, or not an ``optimize`` manifest.
    """
    path = Path(manifest_path)
    if not path.is_file():
        raise InputError(f"manifest {path} not found: pass the manifest.json that edgeopt optimize wrote")
    try:
        data = read_json(path)
    except (OSError, ValueError) as exc:
        raise InputError(f"manifest {path} is not valid JSON ({exc}): pass the manifest.json edgeopt optimize "
                         "wrote") from None
    if not isinstance(data, dict) or not isinstance(data.get("artifacts"), list):
        raise InputError(f"manifest {path} has no 'artifacts' list: pass the manifest.json edgeopt optimize wrote")
    try:
        artifacts = [Artifact.model_validate(a) for a in data["artifacts"]]
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InputError(f"manifest {path}: artifact field {where}: {first['msg']}; re-run edgeopt optimize") from None
    target = data.get("target")
    return (target if isinstance(target, str) else None), artifacts


def _artifact_file(manifest: Path, art: Artifact) -> Path:
    """The artifact's file: next to the manifest (out dirs can move), else the path recorded."""
    moved = manifest.parent / Path(art.path).name
    return moved if moved.exists() else Path(art.path)


def _file_format(art: Artifact) -> ModelFormat | None:
    """The file format the agent loads an artifact as (a TensorRT ONNX is an ONNX file); None: not deployable."""
    desc = get_format(art.format)
    return ModelFormat(desc.file_format) if desc.deployable else None


def _only_runtime(art: Artifact) -> str | None:
    """The runtime an artifact must run on when its file format alone would allow others (TensorRT ONNX)."""
    desc = get_format(art.format)
    if desc.loads_as is None:
        return None
    own = loaders(art.format)
    return own[0].name if own else None


def _skip_reason(art: Artifact, fmt: ModelFormat | None, runtime: str, *, local: bool) -> str | None:
    if not local:
        return None  # the remote agent reports what it lacks
    only = _only_runtime(art)
    if only is not None and runtime != only:
        return get_format(art.format).wrong_runtime_hint or (
            f"a {art.format.value} artifact runs only on {only}: bench it on the device (--device) or pass "
            f"--runtime {only}")
    desc = find_runtime(runtime)
    if desc is not None:
        return desc.not_here_reason(fmt.value if fmt else art.format.value)
    return None


def benchmark_manifest(
    manifest_path: str | Path,
    *,
    target: str | None = None,
    settings: MeasureSettings | None = None,
    remote: RemoteSpec | None = None,
    runner: Runner | None = None,
    progress: ProgressSink | None = None,
    targets_dirs: Sequence[Path] = (),
    **bench_options: Any,
) -> list[ManifestBenchEntry]:
    """Benchmark every artifact of ``manifest_path`` that can run where the agent runs.

    Args:
        manifest_path: the ``manifest.json`` that :func:`edgeopt.optimize` wrote.
        target: target name; None: the ``device``'s target for a remote run, else the manifest's target.
        settings: measurement settings used for every artifact. Their ``runtime`` applies to the artifacts whose
            format it loads; the others are skipped.
        remote: the SSH device to run on (None: this machine). runner: an explicit runner instead.
        progress: receives the agent's progress events. targets_dirs: extra directories of target YAML files.
        **bench_options: instead of ``settings`` and ``remote``: keyword options of :func:`edgeopt.benchmark`
            (iterations, fps, host, device, ...).

    Returns:
        One entry per artifact, in manifest order: a result, or the reason it was skipped.

    Raises:
        InputError: a bad manifest or settings (exit code 2).
        RunnerError: the agent or device failed on an artifact (exit code 3).
    """
    if bench_options:
        if settings is not None or remote is not None:
            raise TypeError("benchmark_manifest: pass settings/remote or benchmark keyword options, not both")
        settings, remote = split_options(bench_options)
    settings, remote = settings or MeasureSettings(), remote or RemoteSpec()
    manifest = Path(manifest_path)
    manifest_target, artifacts = load_manifest_artifacts(manifest)
    local = runner.describe().local if runner is not None else not remote.remote
    if target is None and local:
        target = manifest_target or "local"
    tgt = load_registry(extra_dirs=targets_dirs).get(target) if target else None
    entries: list[ManifestBenchEntry] = []
    for art in artifacts:
        path = _artifact_file(manifest, art)
        runtime, reason = _plan(art, path, settings, tgt, local=local)
        result = None
        if reason is None:
            result = run_benchmark(path, settings.replace(runtime=runtime), target=target, runner=runner,
                                   remote=remote, progress=progress, targets_dirs=targets_dirs)
            runtime = result.runtime.name
        entries.append(ManifestBenchEntry(artifact=art.name, format=art.format, path=str(path),
                                          size_bytes=art.size_bytes, runtime=runtime, result=result,
                                          skipped_reason=reason))
    return entries


def _plan(art: Artifact, path: Path, settings: MeasureSettings, tgt: Target | None, *,
          local: bool) -> tuple[str | None, str | None]:
    """(runtime, None) for an artifact to benchmark, or (runtime or None, why it is skipped)."""
    fmt = _file_format(art)
    if fmt is None:
        return settings.runtime, f"{art.format.value} is a training format, not a deployable one: no runtime loads it"
    if not path.exists():
        return settings.runtime, f"file {path} is missing: re-run edgeopt optimize"
    runtime = settings.runtime or _only_runtime(art)
    if tgt is not None:
        try:
            runtime, _ = choose_runtime(fmt, tgt, runtime, settings.runtime_options, local=local)
        except InputError as exc:
            return settings.runtime, str(exc)
    reason = _skip_reason(art, fmt, runtime, local=local) if runtime is not None else None
    return runtime, reason


def manifest_report(manifest_path: str | Path, entries: list[ManifestBenchEntry]) -> dict[str, Any]:
    """The ``--json`` document: ``{"manifest": path, "results": [...]}``.

    Each result is ``{artifact, format, runtime, result}`` or ``{artifact, format, runtime, skipped_reason}``.
    """
    results: list[dict[str, Any]] = []
    for e in entries:
        row: dict[str, Any] = {"artifact": e.artifact, "format": e.format.value, "runtime": e.runtime}
        if e.result is not None:
            row["result"] = e.result.model_dump(mode="json")
        else:
            row["skipped_reason"] = e.skipped_reason
        results.append(row)
    return {"manifest": str(manifest_path), "results": results}


def manifest_table(entries: list[ManifestBenchEntry]) -> list[list[str]]:
    """Rows (header first) of the text table: artifact, format, runtime, size, p50, p99, throughput, verdict."""
    rows = [["artifact", "format", "runtime", "size", "p50 ms", "p99 ms", "inf/s", "verdict"]]
    for e in entries:
        size = f"{e.size_bytes / 1024:,.1f} KiB"
        r = e.result
        if r is None:
            rows.append([e.artifact, e.format.value, e.runtime or "-", size, "-", "-", "-",
                         f"skipped: {e.skipped_reason}"])
            continue
        if not r.valid:
            verdict = "INVALID: " + "; ".join(r.invalid_reasons)
        elif r.fps_budget is None:
            verdict = "ok (no budget)"
        else:
            verdict = f"{'PASS' if r.fps_budget.passed else 'FAIL'} at {r.fps_budget.fps:g} FPS"
        rows.append([e.artifact, e.format.value, r.runtime.name, size, f"{r.latency_ms.p50:.4f}",
                     f"{r.latency_ms.p99:.4f}", f"{r.throughput_ips:,.1f}", verdict])
    return rows
