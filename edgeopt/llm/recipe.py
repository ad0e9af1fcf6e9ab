"""LLM recipes: ``recipes/llm/<name>.yaml``, one block per runtime folder to build.

They live apart from the ONNX recipes (``recipes/*.yaml``: ordered passes on one graph) because an LLM export is
not a pass chain: each runtime has its own exporter (the onnxruntime-genai model builder), given a few settings.
``edgeopt optimize LLM_DIR --recipe int4`` reads ``recipes/llm/int4.yaml``; a path to a YAML file works too.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..enums import Precision
from ..recipes import RecipeError
from ..recipes.registry import builtin_dir
from ..registry import exporting_runtimes
from ..registry.kind_spec import GENERATIVE
from ..yamlio import read_text, safe_load

SUFFIXES = (".yaml", ".yml")


class OrtGenaiSettings(BaseModel):
    """Options of the onnxruntime-genai model builder (``--extra_options``), as edgeopt names them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    precision: Literal["fp32", "fp16", "int8", "int4"] = Field(description="Builder precision (-p).")
    block_size: Literal[16, 32, 64, 128, 256] = Field(default=32, description="Weights per quantization block.")
    symmetric: bool = Field(default=True, description="Symmetric (int4) or with zero points (uint4).")
    accuracy_level: Literal[0, 1, 2, 3, 4] = Field(
        default=4, description="MatMulNBits compute floor: 4 = activations quantized to int8 per block (CPU fast "
        "path), 1 = fp32, 0 = the runtime's default.")
    algo: Literal["default", "rtn", "k_quant"] = Field(default="default", description="Weight quantizer.")
    last_matmul_int8: bool = Field(default=False, description="Quantize lm_head to INT8 instead of INT4.")

    @model_validator(mode="after")
    def _quant_options_need_quantization(self) -> OrtGenaiSettings:
        quantized = self.precision in ("int4", "int8")
        if not quantized and (self.algo != "default" or self.last_matmul_int8):
            raise ValueError(f"algo and last_matmul_int8 apply to int4/int8, not {self.precision}")
        return self

    @property
    def weight_precision(self) -> Precision:
        return Precision(self.precision)

    def builder_options(self) -> dict[str, str]:
        """``--extra_options`` of the builder (quantization keys only for int4/int8)."""
        if self.precision not in ("int4", "int8"):
            return {}
        options = {"block_size": str(self.block_size), "is_symmetric": str(self.symmetric).lower(),
                   "accuracy_level": str(self.accuracy_level)}
        if self.algo != "default":
            options["algo_config"] = self.algo
        if self.last_matmul_int8:
            options["matmul_mixed_precision"] = "last_matmul:int8"
        return options


class OvGenaiSettings(BaseModel):
    """How the OpenVINO GenAI folder's weights are stored (NNCF ``compress_weights`` for the int modes)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    weights: Literal["int4_sym", "int4_asym", "int8_sym", "int8_asym", "fp16", "fp32"] = Field(
        description="NNCF CompressWeightsMode for int4/int8 (int8 is per channel); fp16/fp32: saved as such.")
    group_size: int = Field(default=128, description="int4 weights per scale group; -1: per output channel.")
    ratio: float = Field(default=1.0, gt=0, le=1, description="Share of the int4-eligible layers put in int4 "
                         "(the rest, and embeddings/lm_head, stay in int8).")
    awq: bool = Field(default=False, description="NNCF's AWQ (activation-aware scales) on calibration text: "
                      "data-aware, needs --calib TEXT.")
    scale_estimation: bool = Field(default=False, description="NNCF's scale estimation (per-group scales fitted "
                                   "to the activations) on calibration text: data-aware, needs --calib TEXT.")
    calib_samples: int = Field(default=32, ge=1, le=4096, description="Calibration windows cut from the text.")
    calib_tokens: int = Field(default=128, ge=8, le=8192, description="Tokens per calibration window.")

    @model_validator(mode="after")
    def _group_size_for_int4(self) -> OvGenaiSettings:
        if self.group_size != -1 and (self.group_size < 16 or self.group_size & (self.group_size - 1)):
            raise ValueError(f"group_size {self.group_size} must be -1 or a power of two >= 16")
        if self.data_aware and not self.weights.startswith("int4"):
            raise ValueError(f"awq and scale_estimation apply to int4 weights, not {self.weights}")
        return self

    @property
    def data_aware(self) -> bool:
        """Whether the compression reads calibration text (AWQ, scale estimation)."""
        return self.awq or self.scale_estimation

    @property
    def weight_precision(self) -> Precision:
        return Precision(self.weights.split("_")[0])


class LlmRecipe(BaseModel):
    """A named LLM recipe: the runtime folders to build and how, one block per generative runtime (the key is the
    runtime's name; the block is its exporter's settings, :mod:`edgeopt.llm.exporter`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$", description="Recipe id; a built-in's equals its file stem.")
    description: str = Field(min_length=3)
    blocks: dict[str, Any] = Field(description="Runtime name -> its exporter's settings (registry order).")

    @model_validator(mode="after")
    def _builds_something(self) -> LlmRecipe:
        if not self.blocks:
            names = " or ".join(r.name for r in exporting_runtimes(GENERATIVE))
            raise ValueError(f"an LLM recipe needs an {names} block")
        return self

    def block(self, runtime: str) -> Any:
        """The settings of ``runtime``'s block, or None when the recipe builds nothing for it."""
        return self.blocks.get(runtime)


def _split(data: Any, path: Path) -> dict[str, Any]:
    """The recipe's YAML mapping with its runtime blocks validated by each runtime's exporter, as
    ``{name, description, blocks}`` (registry order).

    Raises:
        RecipeError: not a mapping, a key that is neither a field nor an LLM runtime, or a bad block value.
    """
    if not isinstance(data, dict):
        raise RecipeError(f"LLM recipe {path}: (top level): must be a mapping (name, description, runtime blocks)")
    runtimes = {r.name: r for r in exporting_runtimes(GENERATIVE)}
    fields = {"name", "description"}
    for key in data:
        if key not in fields and key not in runtimes:
            raise RecipeError(f"LLM recipe {path}: {key}: unknown key; an LLM recipe has name, description and a "
                              f"block per LLM runtime ({', '.join(runtimes)}); see docs/llm.md")
    blocks: dict[str, Any] = {}
    for name, desc in runtimes.items():
        if data.get(name) is None:
            continue
        try:
            blocks[name] = desc.load_exporter().settings_model.model_validate(data[name])
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join([name, *(str(p) for p in first["loc"])])
            raise RecipeError(f"LLM recipe {path}: {where}: {first['msg']}; see docs/llm.md") from None
    return {**{k: v for k, v in data.items() if k in fields}, "blocks": blocks}


def llm_recipe_dir() -> Path:
    return builtin_dir() / "llm"


def llm_recipe_names() -> list[str]:
    folder = llm_recipe_dir()
    return sorted(p.stem for p in folder.iterdir() if p.suffix in SUFFIXES) if folder.is_dir() else []


def _resolve(recipe: str | Path) -> Path:
    text = str(recipe)
    as_path = Path(text).expanduser()
    if as_path.suffix in SUFFIXES or "/" in text:
        if as_path.is_file():
            return as_path
        raise RecipeError(f"LLM recipe file {as_path} not found: check the path")
    names = llm_recipe_names()
    if text in names:
        return next(llm_recipe_dir() / f"{text}{s}" for s in SUFFIXES if (llm_recipe_dir() / f"{text}{s}").is_file())
    close = difflib.get_close_matches(text, names, n=1, cutoff=0.6)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    raise RecipeError(f"unknown LLM recipe '{text}'{hint}; LLM recipes: {', '.join(names)} (recipes/llm/), or a "
                      "path to a YAML file")


def load_llm_recipe(recipe: str | Path) -> tuple[LlmRecipe, Path]:
    """(recipe, its file) for a built-in LLM recipe name or a YAML path.

    Raises:
        RecipeError: unknown name, unreadable file, or an invalid recipe (the first problem, with its field).
    """
    path = _resolve(recipe)
    try:
        data = safe_load(read_text(path))
        loaded = LlmRecipe.model_validate(_split(data, path))
    except (OSError, yaml.YAMLError) as exc:
        raise RecipeError(f"cannot read LLM recipe {path}: {exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise RecipeError(f"LLM recipe {path}: {where}: {first['msg']}; see docs/llm.md") from None
    if path.parent == llm_recipe_dir() and loaded.name != path.stem:
        raise RecipeError(f"{path}: name '{loaded.name}' does not match the file name; set name: {path.stem}")
    return loaded, path
