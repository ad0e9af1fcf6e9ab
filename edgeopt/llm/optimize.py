"""``edgeopt optimize LLM_DIR --target T --recipe int4``: Hugging Face decoder folder in, runtime folders out.

Each runtime block of the LLM recipe (:mod:`edgeopt.llm.recipe`) becomes one folder under the output directory
(``onnxruntime_genai/``, ``openvino_genai/``), and ``manifest.json`` lists them as artifacts in the same shape as an
ONNX ``optimize`` manifest (``edgeopt bench out/manifest.json`` reads its ``artifacts`` and ``target``).
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import json
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .._version import __version__
from ..enums import Precision
from ..errors import InputError
from ..fsutil import atomic_write_text
from ..names import ModelFormat
from ..passes.base import Artifact
from ..registry import KindDescriptor, exporting_runtimes, get_runtime
from ..registry.kind_spec import GENERATIVE
from ..registry.lookup import detect_format, model_digest
from ..targets import load_registry
from .exporter import LlmExporter
from .folders import check_hf_folder
from .recipe import LlmRecipe, load_llm_recipe

MANIFEST = "manifest.json"


class LlmOptimizeResult(BaseModel):
    """What an LLM ``optimize`` made; also ``<out_dir>/manifest.json``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["llm"] = "llm"
    edgeopt_version: str
    started_at: str = Field(description="UTC ISO-8601 start time.")
    seconds: float = Field(description="Wall time of the whole call.")
    model: Artifact = Field(description="The input folder (sha256 over its files).")
    model_type: str = Field(description="config.json model_type (llama, qwen2, ...).")
    target: str
    recipe: str
    recipe_source: str
    out_dir: str
    manifest_path: str
    artifacts: list[Artifact] = Field(description="One runtime folder per recipe block.")
    versions: dict[str, str | None] = Field(description="Versions of the exporters and libraries used.")
    warnings: list[str]


def _folder_artifact(path: Path, fmt: str, **fields: Any) -> Artifact:
    digest, size = model_digest(path, fmt)
    return Artifact(path=str(path), format=ModelFormat(fmt), sha256=digest, size_bytes=size, **fields)


def _versions() -> dict[str, str | None]:
    """Versions of every distribution the LLM exporters use (each exporter's ``versioned``)."""
    found: dict[str, str | None] = {}
    dists = dict.fromkeys(d for r in exporting_runtimes(GENERATIVE) for d in r.load_exporter().versioned)
    for dist in dists:
        try:
            found[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            found[dist] = None
    return found


def _output_dir(model: Path, recipe: LlmRecipe, out_dir: str | Path | None) -> Path:
    out = Path(out_dir) if out_dir is not None else Path("out") / f"{model.name}.{recipe.name}"
    if out.resolve() == model.resolve() or model.resolve() in out.resolve().parents:
        raise InputError(f"output directory {out} is inside the input folder {model}: pass --out elsewhere")
    return out


def applicable_blocks(recipe: LlmRecipe, config: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The recipe's blocks that can make a folder that runs on a CPU for this model, and one warning per block
    left out (why, told from config.json before any export).

    Raises:
        InputError: no block can (exit 2, naming each reason).
    """
    blocks, skipped = {}, []
    for runtime, settings in recipe.blocks.items():
        why = get_runtime(runtime).load_exporter().cannot_apply(config, settings)
        if why:
            skipped.append(f"{runtime} block of recipe {recipe.name} not built: {why}")
        else:
            blocks[runtime] = settings
    if not blocks:
        raise InputError(f"LLM recipe {recipe.name}: no block applies to this model: {'; '.join(skipped)}")
    return blocks, skipped


def _build(src: Path, out: Path, blocks: dict[str, Any], source: Artifact, calib: Path | None = None
           ) -> list[Artifact]:
    """One runtime folder per recipe block (replaced when it exists), as manifest artifacts."""
    artifacts: list[Artifact] = []
    lineage: dict[str, Any] = {"parent_sha256": source.sha256, "parent_name": "input"}
    for runtime, settings in blocks.items():
        desc = get_runtime(runtime)
        exporter: LlmExporter = desc.load_exporter()
        fmt = desc.delivers or runtime
        folder = out / runtime
        shutil.rmtree(folder, ignore_errors=True)
        done = exporter.export(src, folder, settings, calib_text=calib if exporter.data_aware(settings) else None)
        artifacts.append(_folder_artifact(
            folder, fmt, name=f"{len(artifacts) + 1}-{runtime}", precision=exporter.weight_precision(settings),
            pass_name=done.pass_name, pass_config=done.pass_config, seconds=round(done.seconds, 3),
            report=done.report, **lineage))
    return artifacts


def _calibration_text(recipe: LlmRecipe, calib: str | Path | None) -> Path | None:
    """The calibration text a data-aware recipe needs, checked (exit 2 when missing or not text)."""
    aware = [rt for rt, settings in recipe.blocks.items()
             if get_runtime(rt).load_exporter().data_aware(settings)]
    if not aware:
        return None
    if calib is None:
        raise InputError(f"LLM recipe {recipe.name} is data-aware (it calibrates on text: AWQ, scale estimation, an "
                         "importance matrix): give --calib TEXT, a UTF-8 text file in the model's domain (a few KB or "
                         "more)")
    return check_calib_text(Path(calib))


def check_calib_text(path: Path) -> Path:
    """``path`` when it is UTF-8 text long enough to calibrate on (AWQ, scale estimation, an importance matrix);
    else exit 2.

    Raises:
        InputError: unreadable, not UTF-8, or under 200 characters.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"--calib {path}: cannot read it as UTF-8 text ({type(exc).__name__}); give a plain text "
                         "file") from None
    if len(text.strip()) < 200:
        raise InputError(f"--calib {path}: {len(text.strip())} characters of text; calibration needs a few KB in the "
                         "model's domain")
    return path


def optimize_llm(model: str | Path, *, target: str, recipe: str | Path, out_dir: str | Path | None = None,
                 targets_dirs: Sequence[Path] = (), calib: str | Path | None = None) -> LlmOptimizeResult:
    """Export the decoder folder ``model`` to the runtime folders ``recipe`` names.

    Args:
        model: a Hugging Face decoder folder (:func:`edgeopt.llm.folders.check_hf_folder`).
        target: target name; recorded, and it must exist. Exports run for the CPU execution provider.
        recipe: an LLM recipe name (``recipes/llm/``) or a YAML path.
        out_dir: output directory (default ``out/<folder name>.<recipe>``); its runtime folders are replaced.
        targets_dirs: extra target directories.
        calib: a UTF-8 text file for the data-aware recipes (``int4-awq``, ``q4_0-imatrix``,
            ``q4_k_m-imatrix``); ignored by the others.

    Raises:
        InputError: not a decoder folder, unknown target or recipe, an exporter failure (LlmExportError).
    """
    started, start = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), time.monotonic()
    src = Path(model)
    fmt = detect_format(src)
    if fmt != "hf_llm":
        raise InputError(f"{src} is an already exported {fmt} folder: optimize takes the Hugging Face folder it "
                         "was made from")
    config = check_hf_folder(src)
    target_obj = load_registry(targets_dirs).get(target)
    loaded, recipe_path = load_llm_recipe(recipe)
    blocks, warnings = applicable_blocks(loaded, config)
    calib_path = _calibration_text(loaded, calib)
    out = _output_dir(src, loaded, out_dir)
    source = _folder_artifact(src, "hf_llm", name="input", precision=Precision.FP32)
    artifacts = _build(src, out, blocks, source, calib_path)
    result = LlmOptimizeResult(
        edgeopt_version=__version__, started_at=started, seconds=round(time.monotonic() - start, 3), model=source,
        model_type=str(config.get("model_type")), target=target_obj.name, recipe=loaded.name,
        recipe_source=str(recipe_path), out_dir=str(out), manifest_path=str(out / MANIFEST), artifacts=artifacts,
        versions=_versions(), warnings=warnings)
    atomic_write_text(out / MANIFEST, json.dumps(result.model_dump(mode="json"), indent=2) + "\n")
    return result


def optimize_generative(model: str | Path, kind: KindDescriptor, a: dict[str, Any]) -> LlmOptimizeResult:
    """The generative kind's ``optimize_api`` entry: :func:`edgeopt.optimize`'s keywords that apply to an LLM folder
    (target, recipe, calib, out_dir, targets_dirs) to :func:`optimize_llm`; the graph-only ones must be unset.

    Raises:
        InputError: a graph-only keyword was given (exit 2), or what :func:`optimize_llm` refuses.
    """
    graph_only = ("eval_data", "input_shapes", "preprocessing", "metric", "output")
    given = [k for k in graph_only if a.get(k) is not None]
    if given:
        raise InputError(f"{model} is {kind.model_word}: {', '.join(given)} apply to graph models only; drop them "
                         "(docs/llm.md)")
    recipe = a["recipe"]
    if not isinstance(recipe, (str, Path)):
        raise InputError(f"recipe={recipe!r}: an LLM folder takes an LLM recipe by name or YAML path (docs/llm.md)")
    return optimize_llm(model, target=a["target"], recipe=recipe, out_dir=a.get("out_dir"),
                        targets_dirs=a.get("targets_dirs") or (), calib=a.get("calib"))
