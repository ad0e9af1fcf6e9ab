"""The pass interface: artifacts are hashed and immutable, configs strict, inputs never modified."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest

from edgeopt.enums import Precision
from edgeopt.fsutil import sha256_file
from edgeopt.passes.base import Artifact, ArtifactFormat, Pass, PassError
from edgeopt.passes.cleanup import CleanupConfig, CleanupPass
from edgeopt.passes.prune_magnitude import PruneMagnitudeConfig, PruneMagnitudePass

from .builders import artifact, context, mlp_model


def test_artifact_from_file_hashes_and_measures(tmp_path: Path) -> None:
    path = mlp_model(tmp_path / "m.onnx")
    art = artifact(path)
    assert art.sha256 == sha256_file(path)
    assert art.size_bytes == path.stat().st_size
    assert art.parent_sha256 is None and art.pass_name is None
    with pytest.raises(pydantic.ValidationError):
        art.name = "changed"  # type: ignore[misc]


def test_config_rejects_unknown_options_and_is_frozen() -> None:
    with pytest.raises(pydantic.ValidationError, match="extra"):
        PruneMagnitudeConfig.model_validate({"sparsity": 0.5})
    with pytest.raises(pydantic.ValidationError):
        PruneMagnitudeConfig.model_validate({"sparsity_ratio": 1.5})
    cfg = PruneMagnitudeConfig()
    with pytest.raises(pydantic.ValidationError):
        cfg.sparsity_ratio = 0.1  # type: ignore[misc]


def test_every_config_field_is_described() -> None:
    from edgeopt.passes.registry import BUILTIN_PASSES, PassRegistry

    registry = PassRegistry()
    for name in BUILTIN_PASSES:
        cls = registry.get_class(name)
        for field_name, info in cls.config_class.model_fields.items():
            assert info.description, f"{name}.{field_name} has no description"


def test_apply_returns_new_artifact_with_lineage_and_keeps_input(tmp_path: Path) -> None:
    path = mlp_model(tmp_path / "m.onnx")
    before = sha256_file(path)
    source = artifact(path)
    made = PruneMagnitudePass(PruneMagnitudeConfig(sparsity_ratio=0.5, min_weight_elements=1)).apply(
        source, context(tmp_path), name="1-prune_magnitude")
    assert sha256_file(path) == before
    assert made.parent_sha256 == source.sha256 and made.parent_name == "input"
    assert made.pass_name == "prune_magnitude" and made.pass_config["sparsity_ratio"] == 0.5
    assert made.sha256 != source.sha256 and made.seconds >= 0
    assert Path(made.path) == tmp_path / "out.onnx"


def test_apply_rejects_a_format_the_pass_does_not_take(tmp_path: Path) -> None:
    source = Artifact(name="input", path="pkg.mod:factory", format=ArtifactFormat.PYTORCH,
                      precision=Precision.FP32, sha256="0" * 64, size_bytes=0)
    with pytest.raises(PassError, match="takes onnx models but got pytorch"):
        CleanupPass(CleanupConfig()).apply(source, context(tmp_path), name="1-cleanup")


def test_conversion_passes_reuse_pass_apply() -> None:
    """A converter differs only in how its (possibly multi-file) output is hashed, not in how it is applied."""
    from edgeopt.passes.convert_base import ConvertPass

    assert ConvertPass.apply is Pass.apply and "output_digest" in vars(ConvertPass)
