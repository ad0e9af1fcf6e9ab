"""Which runtimes a one-pass sweep measures, with which threads and options: the target's ONNX runtimes that are
installed where the agent runs (with their versions), one explicit thread count for all of them, the options that
make "fp32" FP32, the runtime's own lower default precision as a level, which artifact of a recipe each loads, and
which formats a recipe delivers for them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..passes.base import ArtifactFormat
from ..recipes import load_recipe
from ..recipes.loader import LoadedRecipe
from ..registry import get_runtime, loaders
from ..runners import Runner
from ..targets import Target
from .levels import LevelTable


def artifact_for(artifacts: Sequence[Any], runtime: str) -> Path:
    """The last artifact ``runtime`` loads (a recipe may deliver ONNX and OpenVINO IR side by side)."""
    for art in reversed(artifacts):
        if runtime in {r.name for r in loaders(art.format)}:
            return Path(art.path)
    raise InputError(f"no artifact of the recipe loads on runtime {runtime}; pick another recipe or runtime")


def recipe_for(name: str, rts: Sequence[str]) -> str | LoadedRecipe:
    """Recipe ``name`` as the sweep optimizes it for runtimes ``rts``: when each runs plain ONNX (none delivers a
    native format: onnxruntime, an ONNX plug-in) and the recipe names no formats, it delivers ONNX only, not the
    other formats the target takes (an OpenVINO IR that no swept runtime loads cost a conversion and its
    validation, ~0.25 CPU-s per recipe on the digits MLP). Otherwise the name, as optimize would load it."""
    loaded = load_recipe(name)
    if not rts or loaded.recipe.formats is not None or any(get_runtime(rt).delivers not in (None, "onnx")
                                                           for rt in rts):
        return name
    return dataclasses.replace(loaded, recipe=loaded.recipe.model_copy(update={"formats": [ArtifactFormat.ONNX]}))


def available_runtimes(runner: Runner, wanted: Sequence[str], probe: Mapping[str, Any] | None = None
                       ) -> dict[str, str]:
    """Runtimes among ``wanted`` that load where the runner runs, with their versions (the agent's probe; ``probe``:
    one already taken)."""
    rts = (probe if probe is not None else runner.probe()).get("runtimes", {})
    return {n: str(rts[n].get("version", "")) for n in wanted if rts.get(n, {}).get("available")}


def sweep_threads(runner: Runner, threads: int, probe: Mapping[str, Any] | None = None) -> int:
    """The thread count of every runtime in the sweep: ``threads``, or (0) the logical cores where the agent runs
    (its probe's ``environment.cores``; ``probe``: one already taken), so every runtime gets the same explicit count
    instead of its own default."""
    if threads > 0:
        return threads
    cores = ((probe if probe is not None else runner.probe()).get("environment") or {}).get("cores")
    return int(cores) if isinstance(cores, int) and cores > 0 else 1


def float_options(rts: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Runtime options that make "fp32" FP32, per runtime: each descriptor's ``reference_options`` (OpenVINO runs
    float parts in BF16 by default on CPUs with AVX512_BF16/AMX, so its reference and its fp32 level ask for
    ``inference_precision: f32``)."""
    return {rt: dict(get_runtime(rt).reference_options) for rt in rts if get_runtime(rt).reference_options}


def low_precision_level(table: LevelTable, model: Path, runtime: str, cpu_flags: Sequence[str] | None) -> None:
    """The model at ``runtime``'s default precision when its descriptor declares a lower one that this CPU may run
    (``low_precision_default``: OpenVINO's BF16), kept as that level (``bf16``) when the runtime reports it ran in
    it; its retention is against the full-precision reference."""
    low = get_runtime(runtime).low_precision_default
    if low is None or not low.expected(cpu_flags):
        return
    lvl = table("fp32-default-precision", low.level, runtime, lambda: model, keep=False, options={low.option: None})
    if low.ran_low(lvl.details):
        table.levels.append(lvl)


def wanted_runtimes(tgt: Target, runtimes: Sequence[str] | None) -> list[str]:
    """The runtimes a sweep on ``tgt`` tries: ``runtimes``, or (none given) each the target runs ONNX on; what the
    sweep's probe asks about (each runtime the agent probes costs an import there).

    Raises:
        InputError: a runtime the target cannot run ONNX on.
    """
    onnx_ok = {r.name for r in loaders(ArtifactFormat.ONNX)}
    supported = [r.value for r in tgt.runtimes if r.value in onnx_ok]
    wanted = list(runtimes) if runtimes else supported
    bad = [r for r in wanted if r not in supported]
    if bad:
        raise InputError(f"--runtimes {', '.join(bad)}: target '{tgt.name}' runs ONNX on {', '.join(supported)} only")
    return wanted


def sweep_runtimes(tgt: Target, runner: Runner, runtimes: Sequence[str] | None,
              probe: Mapping[str, Any] | None = None) -> tuple[list[str], dict[str, str], list[str]]:
    """(runtimes to sweep, their versions where the runner runs, warnings for the ones missing there).

    Raises:
        InputError: a runtime the target cannot run ONNX on, or none of them installed.
    """
    wanted = wanted_runtimes(tgt, runtimes)
    versions = available_runtimes(runner, wanted, probe)
    if not versions:
        raise InputError(f"none of the runtimes {', '.join(wanted)} is installed where the sweep runs; install one")
    warnings = [f"runtime {r} is not installed where the sweep runs; skipped" for r in wanted if r not in versions]
    return [r for r in wanted if r in versions], versions, warnings
