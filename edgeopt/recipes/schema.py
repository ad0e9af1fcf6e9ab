"""The typed model of a recipe: an ordered list of passes with their options, plus the formats to deliver."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..calib.images import ImagePreprocessing
from ..passes.base import ArtifactFormat


class RecipeStep(BaseModel):
    """One pass of a recipe: its registry name and its options (validated by the pass's own config model)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    pass_name: str = Field(alias="pass", min_length=1, description="Registered pass name (edgeopt recipes --passes).")
    config: dict[str, Any] = Field(default_factory=dict, description="Options of the pass; unknown ones are errors.")


class Recipe(BaseModel):
    """A named optimization recipe (one YAML file in ``recipes/`` or a user's file)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$", description="Recipe id; a built-in's equals its file stem.")
    description: str = Field(min_length=3, description="What the recipe does and when to use it.")
    formats: list[ArtifactFormat] | None = Field(
        default=None, description="Formats the target should receive; None: what the target's runtimes take."
    )
    preprocessing: ImagePreprocessing | None = Field(
        default=None, description="How a folder of calibration images becomes model inputs."
    )
    passes: list[RecipeStep] = Field(min_length=1, description="Passes, run in order, each on the previous output.")
    convert: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Options of the conversion passes that deliver the formats, by pass name (to_openvino, "
        "to_tflite, to_coreml, tensorrt_prepare); docs/formats.md.",
    )
