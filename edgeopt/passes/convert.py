"""Deliver every format a target runs: plan the conversion passes for a recipe on a target, run them on the
recipe's result, and prove each converted artifact against the ONNX reference (:mod:`edgeopt.passes.validate`).

Formats come from the recipe's ``formats`` list, else from the target (:func:`default_formats`): ``intel-nuc``
(and ``local`` when OpenVINO is installed) gets OpenVINO IR, Raspberry Pi and Coral get TFLite, Jetsons get
ONNX for an on-device TensorRT build, ``mac-m-series`` gets Core ML. A format the recipe asks for must be
deliverable (else an error before any work); a default one whose converter cannot run here is skipped with a
warning (the ONNX still ships).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..enums import Precision
from ..errors import InputError
from ..names import ModelFormat
from ..registry import ConversionSource, converters, get_format, get_runtime, loaders
from ..targets.schema import Target
from .base import Artifact, ArtifactFormat, Pass, PassContext, PassUnavailableError
from .convert_base import ConvertPass
from .registry import PassRegistry
from .validate import validate_artifact

VALIDATION_SAMPLES = 16


class _Converters(Mapping[ArtifactFormat, str]):
    """Format -> the pass that makes it, read from the format descriptors (a live view; plug-ins included)."""

    def __getitem__(self, fmt: ArtifactFormat) -> str:
        name = converters().get(ModelFormat(fmt).value)
        if name is None:
            raise KeyError(fmt)
        return name

    def __iter__(self) -> Iterator[ArtifactFormat]:
        return iter([ModelFormat(name) for name in converters()])

    def __len__(self) -> int:
        return len(converters())


CONVERTERS: Mapping[ArtifactFormat, str] = _Converters()


def _target_loads(fmt: ArtifactFormat, target: Target) -> bool:
    """Whether one of ``target``'s runtimes loads ``fmt``."""
    names = {r.value for r in target.runtimes}
    return any(r.name in names for r in loaders(fmt))


def default_formats(target: Target) -> list[ArtifactFormat]:
    """What ``target`` gets when the recipe names no formats: ONNX plus each of its runtimes' native format.

    A detected target (``local``) gets a runtime's native format only when that runtime is installed here.
    """
    out = [ArtifactFormat.ONNX] if _target_loads(ArtifactFormat.ONNX, target) else []
    for runtime in target.runtimes:
        desc = get_runtime(runtime)
        if desc.delivers is None or ModelFormat(desc.delivers) in out:
            continue
        if target.detect and not desc.installed_here():
            continue
        out.append(ModelFormat(desc.delivers))
    return out


@dataclass
class ConversionPlan:
    """Formats delivered and the conversion passes (resolved for the target) that make the non-ONNX ones."""

    formats: list[ArtifactFormat]
    passes: dict[ArtifactFormat, Pass[Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def plan_conversions(
    recipe_formats: Sequence[ArtifactFormat] | None,
    target: Target,
    final_format: ArtifactFormat,
    source_format: ArtifactFormat,
    registry: PassRegistry,
    configured: Mapping[str, Pass[Any]] | None = None,
) -> ConversionPlan:
    """Check the formats against the target and build their converters, before any work.

    ``configured`` holds the recipe's own converter configs (its ``convert:`` section), by pass name.

    Raises:
        InputError: a requested format the target cannot run, or whose converter cannot run here.
    """
    explicit = recipe_formats is not None
    wanted = list(recipe_formats) if recipe_formats else default_formats(target)
    plan = ConversionPlan(formats=[])
    for fmt in wanted:
        if not _target_loads(fmt, target) and not target.detect:
            runs = ", ".join(r.value for r in target.runtimes)
            raise InputError(f"target '{target.name}' runs {runs}, which cannot load {fmt.value} models; set the "
                             f"recipe's formats to one of: {', '.join(f.value for f in default_formats(target))}")
        if fmt is final_format or fmt is ArtifactFormat.ONNX:
            plan.formats.append(fmt)
            continue
        problem = None
        try:
            name = get_format(fmt).converter
            if name is None:
                raise PassUnavailableError(f"no pass makes {fmt.value} models ({get_format(fmt).summary})")
            pass_ = (configured or {}).get(name) or registry.create(name)
            if pass_.availability() is not None:
                raise PassUnavailableError(str(pass_.availability()))
            pass_ = pass_.for_target(target)
        except (PassUnavailableError, KeyError) as exc:
            problem = str(exc)
        else:
            if source_format not in pass_.input_formats and final_format not in pass_.input_formats:
                problem = (f"{pass_.name} converts {', '.join(f.value for f in pass_.input_formats)} models only "
                           f"(this input is {source_format.value})")
        if problem:
            if explicit:
                raise InputError(f"cannot deliver {fmt.value} for target '{target.name}': {problem}")
            plan.warnings.append(f"{fmt.value} not delivered for target '{target.name}': {problem}")
            continue
        plan.formats.append(fmt)
        plan.passes[fmt] = pass_
    if not plan.formats:
        raise InputError(f"nothing target '{target.name}' runs can be delivered here: {'; '.join(plan.warnings)}")
    return plan


def conversion_source(fmt: ArtifactFormat, source: Artifact, artifacts: Sequence[Artifact]) -> Artifact:
    """The artifact a converter starts from (its format's ``conversion_source``): the optimize input (Core ML
    converts the PyTorch model), the last FP32 ONNX (TFLite quantizes itself, from the calibration data), or the
    recipe's final ONNX."""
    chain = [source, *artifacts]
    onnx = [a for a in chain if a.format is ArtifactFormat.ONNX]
    start = get_format(fmt).conversion_source
    if start is ConversionSource.INPUT:
        return source
    if start is ConversionSource.FP32_ONNX:
        fp32 = [a for a in onnx if a.precision is Precision.FP32]
        return fp32[-1] if fp32 else onnx[-1]
    return onnx[-1]


def run_conversions(
    plan: ConversionPlan,
    source: Artifact,
    artifacts: Sequence[Artifact],
    *,
    out_dir: Path,
    stem: str,
    recipe: str,
    context: PassContext,
    samples: Sequence[dict[str, np.ndarray]] | None,
    strict: bool = True,
) -> list[Artifact]:
    """Run the planned converters and validate each result; return the converted artifacts (in ``out_dir``),
    each with a ``validation`` entry in its report.

    Raises:
        PassError: a converter failed, or its output diverges from the reference beyond the thresholds.
    """
    final = artifacts[-1] if artifacts else source
    reference = next((a for a in [source, *artifacts] if a.format is ArtifactFormat.ONNX), None)
    made: list[Artifact] = []
    for i, (fmt, pass_) in enumerate(plan.passes.items(), start=1):
        start = conversion_source(fmt, source, artifacts)
        if isinstance(pass_, ConvertPass):  # every converter is; the plan types them as passes
            pass_ = pass_.for_source(final.precision)
        work = Path(tempfile.mkdtemp(prefix=".edgeopt-convert-", dir=out_dir))
        try:
            out_name = f"{stem}.{recipe}{pass_.suffix}"  # type: ignore[attr-defined]
            ctx = dataclasses.replace(context, work_dir=work, output_path=work / out_name)
            context.reporter.info(f"[convert {i}/{len(plan.passes)}] {pass_.name} -> {fmt.value}")
            art = pass_.apply(start, ctx, name=f"convert-{pass_.name}")
            art = art.model_copy(update={"path": str(_move_into(Path(art.path), fmt, out_dir))})
        finally:
            shutil.rmtree(work, ignore_errors=True)
        ref = start if start.format is ArtifactFormat.ONNX else reference  # a conversion must match its parent
        if ref is not None and samples:
            check = validate_artifact(art, Path(ref.path), samples, strict=strict)
            entry = {**check.model_dump(mode="json"), "reference": ref.name}
            art = art.model_copy(update={"report": {**art.report, "validation": entry}})
            if check.runtime is None and check.note:
                context.reporter.info(f"{art.name}: {check.note}")
        made.append(art)
    return made


def _move_into(path: Path, fmt: ArtifactFormat, out_dir: Path) -> Path:
    """Rename the converted file(s) into ``out_dir``: companions first (IR .bin, external data), then the main
    file; a package directory whole."""
    if not path.is_dir():
        for companion in get_format(get_format(fmt).file_format).companions(path):
            os.replace(companion, out_dir / companion.name)
    final = out_dir / path.name
    if final.is_dir():
        shutil.rmtree(final)
    os.replace(path, final)
    return final
