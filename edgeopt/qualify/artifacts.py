"""What gets qualified: the spec's model (a file or a zoo model built into the work dir), optimized by its recipe
per target, or an already optimized file. The reference for retention is always the spec's ``model``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..deploy.use import DeploymentUse, open_deployment
from ..fsutil import sha256_file
from ..passes.base import ArtifactFormat
from ..zoo import build as build_zoo
from .loader import LoadedSpec

Log = Callable[[str], None]


@dataclass
class Models:
    """The reference model and the qualified file per target name (filled lazily: recipes run per target)."""

    reference: Path
    source: Literal["model", "optimized", "recipe"]
    recipe: str | None
    fixed: Path | None = None  # the qualified file when it does not depend on the target
    per_target: dict[str, Path] = field(default_factory=dict)
    deployment: DeploymentUse | None = None  # the qualified file is a deployment's: its settings apply


def reference_model(loaded: LoadedSpec, work_dir: Path, log: Log) -> Path:
    """The spec's model file; a zoo model is built into ``work_dir/models`` (rebuilt only when missing)."""
    spec = loaded.spec
    if spec.model.zoo:
        out = work_dir / "models" / f"{spec.model.zoo}.onnx"
        if not out.is_file():
            log(f"building zoo model {spec.model.zoo} into {out}")
            build_zoo(spec.model.zoo, out)
        return out
    assert spec.model.path is not None
    use = open_deployment(loaded.resolve(spec.model.path))
    return use.model_path if use is not None else loaded.resolve(spec.model.path)


def prepare(loaded: LoadedSpec, work_dir: Path, log: Log) -> Models:
    spec = loaded.spec
    ref = reference_model(loaded, work_dir, log)
    if spec.optimized:
        use = open_deployment(loaded.resolve(spec.optimized))
        fixed = use.model_path if use is not None else loaded.resolve(spec.optimized)
        return Models(reference=ref, source="optimized", recipe=None, fixed=fixed, deployment=use)
    if spec.recipe:  # (not on a deployment: the loader refuses that)
        return Models(reference=ref, source="recipe", recipe=spec.recipe)
    use = open_deployment(loaded.resolve(spec.model.path)) if spec.model.path else None
    return Models(reference=ref, source="model", recipe=None, fixed=ref, deployment=use)


def qualified_for(models: Models, loaded: LoadedSpec, target: str, work_dir: Path, log: Log) -> Path:
    """The file to qualify on ``target``: runs the recipe once per target name (INT8 defaults depend on it)."""
    if models.fixed is not None:
        return models.fixed
    if target not in models.per_target:
        from ..optimize import optimize_graph

        spec = loaded.spec
        assert spec.recipe is not None
        recipe: str | Path = spec.recipe
        if Path(spec.recipe).suffix in (".yaml", ".yml") or "/" in spec.recipe:
            recipe = loaded.resolve(spec.recipe)
        out = work_dir / "optimized" / target
        log(f"optimizing {models.reference.name} with recipe {spec.recipe} for target {target} into {out}")
        result = optimize_graph(models.reference, target=target, recipe=recipe, out_dir=out,
                          calib=loaded.resolve(spec.calib) if spec.calib else None,
                          input_shapes=spec.model.shapes, fidelity=False, bench=False, seed=spec.measure.seed)
        # Retention runs on the host with onnxruntime, so qualify the recipe's ONNX result (conversions such as
        # OpenVINO IR are validated by optimize itself against that same ONNX file).
        chosen = result.last_of(ArtifactFormat.ONNX) or result.final
        models.per_target[target] = Path(chosen.path)
    return models.per_target[target]


def sha_of(path: Path) -> str:
    return sha256_file(path)
