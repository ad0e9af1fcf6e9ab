"""The exporter contract of a generative runtime: how its model folders (or files) are made from a Hugging Face
decoder folder. A runtime descriptor names its exporter (``exporter = "module:EXPORTER"``) and lists its
quantization levels as data (``levels``); ``optimize``, the sweep and qualify's FP32 reference build through this
interface only, so a new generative runtime is its descriptor, its agent runtime, its exporter and its format.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..enums import Precision
from ..errors import InputError


@dataclass(frozen=True)
class ExportOutcome:
    """What one export made, as the optimize manifest records it."""

    seconds: float
    pass_name: str
    pass_config: dict[str, Any]
    report: dict[str, Any] = field(default_factory=dict)


class LlmExporter:
    """Base of a generative runtime's exporter. Subclasses set ``runtime``, ``settings_model`` and ``pass_name``
    and implement :meth:`export`."""

    runtime: str = ""
    settings_model: type[BaseModel] = BaseModel
    pass_name: str = ""
    versioned: tuple[str, ...] = ()  # distributions whose versions the optimize manifest records

    def settings(self, data: Mapping[str, Any], *, where: str = "settings") -> BaseModel:
        """``data`` validated by the exporter's settings model.

        Raises:
            InputError: a bad key or value (one line naming ``where``, the field and the problem).
        """
        try:
            return self.settings_model.model_validate(dict(data))
        except ValidationError as exc:
            first = exc.errors()[0]
            key = ".".join(str(p) for p in first["loc"]) or "(top level)"
            raise InputError(f"{where}: {key}: {first['msg']}") from None

    def data_aware(self, settings: BaseModel) -> bool:
        """Whether the export reads calibration text."""
        return bool(getattr(settings, "data_aware", False))

    def weight_precision(self, settings: BaseModel) -> Precision:
        """The precision its weights are stored in."""
        value = getattr(settings, "weight_precision", None)  # the settings models of the built-in exporters have it
        if value is None:
            raise NotImplementedError(f"{type(settings).__name__} has no weight_precision: override weight_precision")
        return Precision(value)

    def cannot_apply(self, config: Mapping[str, Any], settings: BaseModel) -> str | None:
        """Why ``settings`` cannot make a folder that runs on a CPU for a model with this ``config.json`` (a group
        size that does not divide the width, a precision the CPU build cannot run), told before any export; None
        when it can. Default: nothing known."""
        return None

    def export(self, src: Path, out: Path, settings: BaseModel, *, calib_text: Path | None = None) -> ExportOutcome:
        """Build ``out`` from the Hugging Face folder ``src`` (``out`` is replaced by the caller)."""
        raise NotImplementedError


def width_problem(config: Mapping[str, Any], group: int, what: str) -> str | None:
    """Why quantization groups of ``group`` weights along a row do not fit this model (the first of its
    ``hidden_size``/``intermediate_size`` that ``group`` does not divide), or None."""
    for key in ("hidden_size", "intermediate_size"):
        width = config.get(key)
        if isinstance(width, int) and width > 0 and group > 0 and width % group:
            return (f"{what} {group} does not divide the model's {key} {width} (config.json): use a {what} that "
                    f"divides {width}")
    return None
