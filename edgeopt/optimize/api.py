"""``edgeopt.optimize``: run a recipe's passes on a model for a target, then measure how faithful each artifact is.

Flow: resolve the target and the recipe -> plan (every pass resolved for the target; unsupported precisions,
formats and missing extras fail here, before any work) -> check the data paths -> run the passes (artifacts
written in a temp dir, validated, renamed into the output dir) -> fidelity and latency -> ``manifest.json``
(written atomically). The input file is never modified.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from .._version import __version__
from ..analysis.loader import load_model
from ..analysis.precision import model_precision
from ..calib import DataSource, ImagePreprocessing
from ..dispatch import entry, kind_of
from ..errors import EdgeoptError, InputError
from ..evaluation import MetricSpec
from ..fsutil import atomic_write_text, sha256_file
from ..passes.base import Artifact, ArtifactFormat, NullReporter, Pass, PassContext, Reporter
from ..passes.convert import VALIDATION_SAMPLES, plan_conversions, run_conversions
from ..passes.pipeline import run_passes
from ..passes.registry import PassRegistry, load_pass_registry
from ..passes.torch_input import looks_like_torch_model, torch_artifact
from ..recipes import LoadedRecipe, Recipe, build_recipe, load_recipe
from ..registry import KindDescriptor
from ..targets import Target, load_registry
from ..untrusted import for_json
from .fidelity import FidelityRow
from .fidelity_table import fidelity_rows, task_metric
from .job import CollectReporter, OptimizeData, OptimizeJob

if TYPE_CHECKING:
    from ..llm.optimize import LlmOptimizeResult

SCHEMA_VERSION = "1.0"
MANIFEST = "manifest.json"


class DataInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str | None = Field(description="File or folder the samples came from; None for random inputs.")
    random: bool = Field(description="True when the samples are random inputs.")


class OptimizeResult(BaseModel):
    """What ``optimize`` made: every artifact with its lineage, and the fidelity table. Also ``manifest.json``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: str = SCHEMA_VERSION
    edgeopt_version: str
    started_at: str = Field(description="UTC ISO-8601 start time.")
    seconds: float = Field(description="Wall time of the whole optimize call.")
    model: Artifact = Field(description="The input model (unchanged: its sha256 is checked after the run).")
    target: str
    recipe: str
    recipe_source: str = Field(description="Recipe file (or '<python>').")
    formats: list[ArtifactFormat] = Field(description="Formats delivered to the target.")
    out_dir: str
    manifest_path: str
    artifacts: list[Artifact] = Field(description="Pass outputs in order; the last one is the recipe's result.")
    calibration: DataInfo | None = Field(description="Calibration data, when a pass needed it.")
    fidelity: list[FidelityRow] | None = Field(description="Each artifact vs the input; None when disabled.")
    warnings: list[str]

    @property
    def final(self) -> Artifact:
        """The recipe's result (the last artifact)."""
        return self.artifacts[-1]

    def last_of(self, fmt: ArtifactFormat) -> Artifact | None:
        """The last artifact of format ``fmt`` (e.g. the recipe's ONNX result before any conversion)."""
        return next((a for a in reversed(self.artifacts) if a.format is fmt), None)


def optimize(
    model: str | Path,
    *,
    target: str,
    recipe: str | Path | Recipe | LoadedRecipe,
    calib: str | Path | None = None,
    out_dir: str | Path | None = None,
    eval_data: str | Path | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    preprocessing: ImagePreprocessing | None = None,
    progress: Reporter | None = None,
    fidelity: bool = True,
    bench: bool = True,
    targets_dirs: Sequence[Path] = (),
    registry: PassRegistry | None = None,
    seed: int = 0,
    metric: MetricSpec | str | None = None,
    output: str | int | None = None,
) -> OptimizeResult | LlmOptimizeResult:
    """Optimize ``model`` for ``target`` with ``recipe``.

    Args:
        model: an ``.onnx`` file (external data allowed) or a PyTorch model (``.pt2``, TorchScript, or
            ``package.module:factory``; needs the PyTorch passes); or a Hugging Face decoder folder, exported to the
            runtime folders its LLM recipe names (docs/llm.md; ``target``, ``recipe``, ``calib``, ``out_dir`` and
            ``targets_dirs`` apply to it). Dispatched on the model's kind (``KindDescriptor.optimize_api``).
        target: target name (``edgeopt targets``); it picks INT8 defaults and the accepted precisions/formats.
        recipe: a built-in recipe name, a path to a recipe YAML, or a :class:`Recipe`.
        calib: calibration data: ``.npz`` keyed by input name, ``.npy``, or a folder of images. None: random
            inputs, with a loud warning, for passes that need calibration.
        out_dir: output directory (default ``out/<model stem>.<recipe>``).
        eval_data: samples for the fidelity table (``.npz`` may hold ``labels`` for accuracy); default: ``calib``.
        input_shapes: concrete shapes of inputs with dynamic dims, by name.
        preprocessing: image preprocessing; overrides the recipe's ``preprocessing`` block.
        progress: receives progress and warnings (the CLI prints them on stderr).
        fidelity: compare every artifact with the input on samples.
        bench: measure each artifact's local latency (short run through the device agent).
        targets_dirs: extra target directories.
        registry: the pass registry (default: built-ins plus entry points).
        seed: seed of random inputs.
        metric: the task metric of the fidelity table (as in ``edgeopt.sweep``: a name or a :class:`MetricSpec`
            with its parameters); None: no task metric (top-1 agreement still shown for classifier outputs).
        output: the output (and slice) the fidelity errors, cosine and metric read, e.g. ``"0,slice=[:,4:,:]"``.

    Returns:
        The result (an LLM folder's: :class:`~edgeopt.llm.optimize.LlmOptimizeResult`), also written to
        ``<out_dir>/manifest.json``.

    Raises:
        InputError: bad model, recipe, data, or a recipe the target cannot take (before any work; exit code 2).
        PassError: a pass failed on this model (exit code 2).
        RunnerError: latency measurement failed in the agent (exit code 3).
    """
    options = {"target": target, "recipe": recipe, "calib": calib, "out_dir": out_dir, "eval_data": eval_data,
               "input_shapes": input_shapes, "preprocessing": preprocessing, "progress": progress,
               "fidelity": fidelity, "bench": bench, "targets_dirs": targets_dirs, "registry": registry, "seed": seed,
               "metric": metric, "output": output}
    kind = kind_of(model)  # the registry's answer; its optimize_api entry runs it
    result: OptimizeResult | LlmOptimizeResult = entry(kind, "optimize_api")(model, kind, options)
    return result


def optimize_tensor(model: str | Path, kind: KindDescriptor, a: dict[str, Any]) -> OptimizeResult:
    """The tensor kind's ``optimize_api`` entry: passes, conversions, fidelity and latency of a graph model."""
    return optimize_graph(model, **a)


def optimize_graph(
    model: str | Path, *, target: str, recipe: str | Path | Recipe | LoadedRecipe, calib: str | Path | None = None,
    out_dir: str | Path | None = None, eval_data: str | Path | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None, preprocessing: ImagePreprocessing | None = None,
    progress: Reporter | None = None, fidelity: bool = True, bench: bool = True, targets_dirs: Sequence[Path] = (),
    registry: PassRegistry | None = None, seed: int = 0, metric: MetricSpec | str | None = None,
    output: str | int | None = None,
) -> OptimizeResult:
    """:func:`optimize` on a graph model (ONNX or PyTorch in), typed: what the sweep, qualify and the CLI call.
    Arguments, result and errors as :func:`optimize`'s."""
    started = time.perf_counter()
    started_at = _dt.datetime.now(_dt.timezone.utc).isoformat()
    reporter = CollectReporter(progress or NullReporter())
    job = _plan_job(model, target, recipe, registry or load_pass_registry(), targets_dirs, reporter)
    data = OptimizeData.open(job, calib, eval_data, input_shapes, preprocessing, reporter, seed)
    task = task_metric(metric, output)  # checked before any pass runs
    out = _output_dir(job, out_dir)
    artifacts = _run_job(job, data, out, reporter, seed)
    rows = fidelity_rows(job.source, artifacts, data, reporter, bench, seed, task) if fidelity else None
    manifest = out / MANIFEST
    result = OptimizeResult(
        edgeopt_version=__version__,
        started_at=started_at,
        seconds=round(time.perf_counter() - started, 3),
        model=job.source,
        target=job.target.name,
        recipe=job.loaded.recipe.name,
        recipe_source=job.loaded.source,
        formats=job.conversions.formats,
        out_dir=str(out),
        manifest_path=str(manifest),
        artifacts=artifacts,
        calibration=DataInfo(source=str(calib) if calib else None, random=calib is None) if job.needs_calib else None,
        fidelity=rows,
        warnings=list(reporter.warnings),
    )
    atomic_write_text(manifest, for_json(result.model_dump_json(indent=2)) + "\n")
    return result


def _plan_job(
    model: str | Path, target: str, recipe: str | Path | Recipe | LoadedRecipe, registry: PassRegistry,
    targets_dirs: Sequence[Path], reporter: Reporter,
) -> OptimizeJob:
    """Resolve the target, the recipe and the input; plan the passes and the conversions (step 1, no work yet)."""
    tgt = load_registry(extra_dirs=targets_dirs).get(target)
    loaded = _load_recipe(recipe, registry)
    source = _input_artifact(model)
    passes = plan(source, loaded, tgt, registry)
    final_format = passes[-1].output_format if passes else source.format
    conversions = plan_conversions(loaded.recipe.formats, tgt, final_format, source.format, registry,
                                   loaded.converters)
    for note in conversions.warnings:
        reporter.warn(note)
    return OptimizeJob(tgt, loaded, source, passes, conversions)


def _output_dir(job: OptimizeJob, out_dir: str | Path | None) -> Path:
    """``out_dir``, or ``out/<stem>.<recipe>``; never one whose files would overwrite the input."""
    out = Path(out_dir) if out_dir else Path("out") / f"{job.stem}.{job.loaded.recipe.name}"
    _refuse_overwriting_input(job.source, out, job.stem, job.loaded.recipe.name)
    return out


def _run_job(job: OptimizeJob, data: OptimizeData, out: Path, reporter: Reporter, seed: int) -> list[Artifact]:
    """Run the passes, then the conversions (each validated against the ONNX reference); check the input is intact."""
    ctx = PassContext(work_dir=out, output_path=out, target=job.target, calibration=data.calib, reporter=reporter,
                      input_shapes=data.shapes, seed=seed)
    recipe = job.loaded.recipe.name
    artifacts = run_passes(job.source, job.passes, out_dir=out, stem=job.stem, recipe=recipe, context=ctx)
    if job.conversions.passes:  # other runtimes' formats, each validated against the ONNX reference
        artifacts += run_conversions(job.conversions, job.source, artifacts, out_dir=out, stem=job.stem,
                                     recipe=recipe, context=ctx,
                                     samples=_validation_samples(job.source, artifacts, data.calib, data.shapes, seed))
    source = job.source
    if source.format is ArtifactFormat.ONNX and sha256_file(Path(source.path)) != source.sha256:
        raise EdgeoptError(f"the input model {source.path} changed during optimize: this is a bug, please report it")
    return artifacts


def plan(source: Artifact, loaded: LoadedRecipe, target: Target, registry: PassRegistry) -> list[Pass[Any]]:
    """The recipe's passes resolved for ``target``, checked against it before any work.

    A PyTorch input gets the ``export`` pass prepended when the recipe starts with an ONNX pass.

    Raises:
        InputError: a pass's output precision or runtime is not supported by the target, a format mismatch
            between passes, or a pass not available here.
    """
    passes = [p.for_target(target) for p in loaded.passes]
    if source.format is ArtifactFormat.PYTORCH and source.format not in passes[0].input_formats:
        passes.insert(0, registry.create("export").for_target(target))
    fmt, precision = source.format, source.precision
    vouched = False  # a pass that changed the precision accepted the target in its own target_problem
    for p in passes:
        if fmt not in p.input_formats:
            wants = ", ".join(sorted(f.value for f in p.input_formats))
            raise InputError(
                f"recipe '{loaded.recipe.name}' ({loaded.source}): pass '{p.name}' takes {wants} but "
                f"gets {fmt.value}; reorder the passes or start from a {wants} model"
            )
        problem = p.target_problem(target, precision)
        if problem:
            raise InputError(f"recipe '{loaded.recipe.name}' cannot run for target '{target.name}': {problem}")
        out = p.output_precision(precision)
        vouched = vouched if out == precision else True
        precision, fmt = out, p.output_format
    if precision not in target.precisions and not vouched:
        have = ", ".join(x.value for x in target.precisions)
        raise InputError(
            f"recipe '{loaded.recipe.name}' delivers {precision.value} but target '{target.name}' runs "
            f"only {have}; pick a recipe for one of those (edgeopt recipes)"
        )
    return passes


def _validation_samples(
    source: Artifact, artifacts: list[Artifact], calib_src: DataSource | None, shapes: dict[str, list[int]], seed: int
) -> list[Any]:
    reference = next((a for a in [source, *artifacts] if a.format is ArtifactFormat.ONNX), None)
    if reference is None:
        return []
    if calib_src is not None and not calib_src.is_random:
        return calib_src.samples(Path(reference.path), VALIDATION_SAMPLES)
    return DataSource(None, input_shapes=shapes, seed=seed + 2, purpose="evaluation").samples(
        Path(reference.path), VALIDATION_SAMPLES)


def _load_recipe(recipe: str | Path | Recipe | LoadedRecipe, registry: PassRegistry) -> LoadedRecipe:
    if isinstance(recipe, LoadedRecipe):
        return recipe
    if isinstance(recipe, Recipe):
        return build_recipe(recipe, registry)
    return load_recipe(recipe, registry)


def _input_artifact(model: str | Path) -> Artifact:
    if looks_like_torch_model(model):
        return torch_artifact(model)
    path = Path(model)
    onnx_model = load_model(path)  # raises ModelLoadError with the fix for anything that is not ONNX
    return Artifact.from_file(path, name="input", format=ArtifactFormat.ONNX, precision=model_precision(onnx_model))


def _refuse_overwriting_input(source: Artifact, out: Path, stem: str, recipe: str) -> None:
    if source.format is not ArtifactFormat.ONNX:
        return
    src = Path(source.path).resolve()
    if src.parent == out.resolve() and src.name.startswith(f"{stem}.{recipe}"):
        raise InputError(f"output dir {out} would overwrite the input {source.path}; pass another --out")
