"""The levels an LLM sweep builds: INT4 variants, INT8 and FP16 per runtime, and each runtime's FP32 reference.

A level is one runtime folder made by the LLM exporters (:mod:`edgeopt.llm.ort_genai_export`,
:mod:`edgeopt.llm.ov_genai_export`) from the sweep's Hugging Face folder. A built folder is reused when its stamp
(``.edgeopt-level.json``: the source's digest and the export settings) matches, so a re-run only measures.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..fsutil import sha256_file
from .ort_genai_export import export_ort_genai
from .ov_genai_export import export_ov_genai
from .recipe import OrtGenaiSettings, OvGenaiSettings, load_llm_recipe

STAMP = ".edgeopt-level.json"
RUNTIMES = ("onnxruntime_genai", "openvino_genai")
REFERENCE = "fp32"
AWQ = "int4-awq"  # the data-aware level: the recipe of that name, on --calib TEXT (OpenVINO GenAI only)


@dataclass(frozen=True)
class LlmLevel:
    """One level: its name (unique per runtime), runtime and export settings."""

    name: str
    runtime: str
    settings: OrtGenaiSettings | OvGenaiSettings

    @property
    def key(self) -> str:
        return f"{self.name}@{self.runtime}"


def _ort(name: str, precision: str, **kw: object) -> LlmLevel:
    return LlmLevel(name, "onnxruntime_genai", OrtGenaiSettings(precision=precision, **kw))  # type: ignore[arg-type]


def _ov(name: str, weights: str, **kw: object) -> LlmLevel:
    return LlmLevel(name, "openvino_genai", OvGenaiSettings(weights=weights, **kw))  # type: ignore[arg-type]


# onnxruntime-genai: int4 block 32/128, RTN or k-quant (its builder's two data-free algorithms); OpenVINO GenAI:
# NNCF int4 symmetric, group 32/128 (data-free; NNCF has no k-quant). Then int8 and fp16, and fp32 (the reference).
ALL_LEVELS: tuple[LlmLevel, ...] = (
    _ort("int4-b32-rtn", "int4", block_size=32, algo="rtn"),
    _ort("int4-b128-rtn", "int4", block_size=128, algo="rtn"),
    _ort("int4-b32-kquant", "int4", block_size=32, algo="k_quant"),
    _ort("int4-b128-kquant", "int4", block_size=128, algo="k_quant"),
    _ort("int8", "int8"),
    _ort("fp16", "fp16"),
    _ort(REFERENCE, "fp32"),
    _ov("int4-g32", "int4_sym", group_size=32),
    _ov("int4-g128", "int4_sym", group_size=128),
    _ov("int8", "int8_asym"),
    _ov("fp16", "fp16"),
    _ov(REFERENCE, "fp32"),
)


def awq_level() -> LlmLevel:
    """``int4-awq`` on OpenVINO GenAI: the settings of the recipe of that name (recipes/llm/int4-awq.yaml)."""
    settings = load_llm_recipe(AWQ)[0].openvino_genai
    assert settings is not None and settings.data_aware, "recipes/llm/int4-awq.yaml lost its openvino_genai block"
    return LlmLevel(AWQ, "openvino_genai", settings)


def select_levels(names: list[str] | None, runtimes: list[str], *, calib: bool = False) -> list[LlmLevel]:
    """The levels named (all by default) on ``runtimes``, plus each runtime's FP32 reference; with ``calib``
    (calibration text given) the data-aware ``int4-awq`` too.

    Raises:
        InputError: an unknown level or runtime name, or ``int4-awq`` named without calibration text.
    """
    bad = [r for r in runtimes if r not in RUNTIMES]
    if bad:
        raise InputError(f"unknown LLM runtime(s) {', '.join(bad)}: use {', '.join(RUNTIMES)}")
    known = sorted({lv.name for lv in ALL_LEVELS} | {AWQ})
    unknown = [n for n in names or [] if n not in known]
    if unknown:
        raise InputError(f"unknown LLM level(s) {', '.join(unknown)}; levels: {', '.join(known)}")
    if AWQ in (names or []) and not calib:
        raise InputError(f"level {AWQ} calibrates on text: give --calib TEXT (a file other than --eval)")
    wanted = set(names or known) | {REFERENCE}
    candidates = ALL_LEVELS + ((awq_level(),) if calib else ())
    return [lv for lv in candidates if lv.runtime in runtimes and lv.name in wanted]


def build_level(level: LlmLevel, src: Path, source_sha256: str, out: Path,
                calib_text: Path | None = None) -> tuple[Path, bool]:
    """The level's folder under ``out`` (``<runtime>/<name>``), exported unless a matching build is there; returns
    (folder, reused). ``calib_text``: what a data-aware level calibrates on (its hash is part of the stamp)."""
    folder = out / level.runtime / level.name
    stamp: dict[str, object] = {"source_sha256": source_sha256, "runtime": level.runtime,
                                "settings": level.settings.model_dump()}
    data_aware = isinstance(level.settings, OvGenaiSettings) and level.settings.data_aware
    if data_aware:
        if calib_text is None:
            raise InputError(f"level {level.key} calibrates on text: give --calib TEXT")
        stamp["calib_sha256"] = sha256_file(calib_text)
    try:
        if json.loads((folder / STAMP).read_text(encoding="utf-8")) == stamp:
            return folder, True
    except (OSError, ValueError):
        pass
    shutil.rmtree(folder, ignore_errors=True)
    if isinstance(level.settings, OrtGenaiSettings):
        export_ort_genai(src, folder, level.settings)
    else:
        export_ov_genai(src, folder, level.settings, calib_text=calib_text if data_aware else None)
    (folder / STAMP).write_text(json.dumps(stamp), encoding="utf-8")
    return folder, False
