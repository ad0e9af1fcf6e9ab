"""Run a list of passes: each output is written in a private temp dir, validated, then renamed into the output
directory, so a crash never leaves a half-written artifact and an invalid model never lands there."""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .base import Artifact, ArtifactFormat, Pass, PassContext, PassError
from .onnx_io import data_files


def artifact_file_name(stem: str, recipe: str, index: int, pass_: Pass[Any], last: bool) -> str:
    """``<stem>.<recipe>.onnx`` for the recipe's result, ``<stem>.<recipe>.<i>-<pass>.onnx`` for the others."""
    suffix = ".onnx" if pass_.output_format is ArtifactFormat.ONNX else f".{pass_.output_format.value}"
    return f"{stem}.{recipe}{suffix}" if last else f"{stem}.{recipe}.{index}-{pass_.name}{suffix}"


def run_passes(
    source: Artifact,
    passes: Sequence[Pass[Any]],
    *,
    out_dir: Path,
    stem: str,
    recipe: str,
    context: PassContext,
) -> list[Artifact]:
    """Run ``passes`` in order from ``source`` and return the artifacts they made, all inside ``out_dir``.

    Args:
        source: the input artifact (never modified).
        passes: passes already resolved for the target.
        out_dir: where artifacts land (created if missing).
        stem: base of the artifact file names (the input's stem).
        recipe: recipe name, used in file names.
        context: the shared context; ``work_dir`` and ``output_path`` are set per step.

    Raises:
        PassError: a pass failed or wrote a model onnxruntime rejects as invalid.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    work_root = Path(tempfile.mkdtemp(prefix=".edgeopt-work-", dir=out_dir))
    artifacts: list[Artifact] = []
    current = source
    try:
        for i, pass_ in enumerate(passes, start=1):
            step_dir = work_root / f"step{i}"
            step_dir.mkdir()
            file_name = artifact_file_name(stem, recipe, i, pass_, last=i == len(passes))
            ctx = dataclasses.replace(context, work_dir=step_dir, output_path=step_dir / file_name)
            context.reporter.info(f"[{i}/{len(passes)}] {pass_.name}")
            made = pass_.apply(current, ctx, name=f"{i}-{pass_.name}")
            notes = validate(Path(made.path), pass_.name) if made.format is ArtifactFormat.ONNX else []
            final = _move_into(Path(made.path), out_dir)
            current = made.model_copy(update={"path": str(final), "warnings": [*made.warnings, *notes]})
            artifacts.append(current)
    finally:
        shutil.rmtree(work_root, ignore_errors=True)
    return artifacts


def validate(path: Path, pass_name: str) -> list[str]:
    """Load ``path`` in onnxruntime (CPU). An invalid graph is an error; a missing CPU kernel is only a note.

    Raises:
        PassError: onnxruntime reports the graph invalid (e.g. per-channel QDQ on a too-old opset).
    """
    import onnxruntime as ort

    try:
        ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime's exception types are not importable in a stable way
        text = " ".join(str(exc).split())
        if "NOT_IMPLEMENTED" in text or "Could not find an implementation" in text:
            return [
                f"onnxruntime on this CPU has no kernel for part of {path.name} ({text[:200]}); it is valid "
                "ONNX for other runtimes"
            ]
        raise PassError(
            f"pass '{pass_name}' produced a model onnxruntime rejects ({text[:300]}); check the "
            "recipe (e.g. cleanup min_opset before quantize_int8)"
        ) from exc
    return []


def _move_into(path: Path, out_dir: Path) -> Path:
    """Rename ``path`` (and its external data files, first) into ``out_dir``; atomic on one file system."""
    for data in data_files(path):
        os.replace(data, out_dir / data.name)
    final = out_dir / path.name
    os.replace(path, final)
    return final
