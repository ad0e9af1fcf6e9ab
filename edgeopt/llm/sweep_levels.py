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

from pydantic import BaseModel

from ..errors import InputError
from ..fsutil import sha256_file
from ..inbound import read_json
from ..registry import exporting_runtimes
from ..registry.kind_spec import GENERATIVE
from ..registry.runtime_spec import RuntimeDescriptor
from ..registry.runtime_sweep import LevelSpec
from .exporter import LlmExporter
from .recipe import load_llm_recipe

STAMP = ".edgeopt-level.json"
REFERENCE = "fp32"  # the name of every runtime's reference level (the descriptors' ``reference`` level)
AWQ = "int4-awq"  # the data-aware level: the recipe of that name, on --calib TEXT


@dataclass(frozen=True)
class LlmLevel:
    """One level: its name (unique per runtime), runtime and export settings (the exporter's settings model)."""

    name: str
    runtime: str
    settings: BaseModel
    data_aware: bool = False

    @property
    def key(self) -> str:
        return f"{self.name}@{self.runtime}"

    def exporter(self) -> LlmExporter:
        """The runtime's exporter (its descriptor's ``exporter``)."""
        exporter: LlmExporter = _descriptor(self.runtime).load_exporter()
        return exporter


def _descriptor(runtime: str) -> RuntimeDescriptor:
    found = next((r for r in exporting_runtimes(GENERATIVE) if r.name == runtime), None)
    if found is None:
        raise InputError(f"unknown LLM runtime {runtime}: use {', '.join(runtime_names())}")
    return found


def runtime_names() -> tuple[str, ...]:
    """The generative runtimes whose levels edgeopt exports (registry order)."""
    return tuple(r.name for r in exporting_runtimes(GENERATIVE))


def level_of(desc: RuntimeDescriptor, spec: LevelSpec) -> LlmLevel:
    """The descriptor's level ``spec`` with its settings validated by the runtime's exporter (from the level's
    recipe block when it names one)."""
    exporter: LlmExporter = desc.load_exporter()
    if spec.recipe is not None:
        block = load_llm_recipe(spec.recipe)[0].block(desc.name)
        if block is None:
            raise InputError(f"level {spec.name}@{desc.name}: recipe {spec.recipe} has no {desc.name} block")
        settings = block
    else:
        settings = exporter.settings(spec.settings, where=f"level {spec.name}@{desc.name}")
    return LlmLevel(spec.name, desc.name, settings, data_aware=spec.data_aware or exporter.data_aware(settings))


def all_levels(*, calib: bool = False) -> tuple[LlmLevel, ...]:
    """Every runtime's levels in registry order (the data-aware ones only with calibration text)."""
    return tuple(level_of(d, spec) for d in exporting_runtimes(GENERATIVE) for spec in d.levels
                 if calib or not spec.data_aware)


def reference_level(runtime: str) -> LlmLevel:
    """The runtime's full-precision reference level."""
    desc = _descriptor(runtime)
    return level_of(desc, next(spec for spec in desc.levels if spec.reference))


def select_levels(names: list[str] | None, runtimes: list[str], *, calib: bool = False) -> list[LlmLevel]:
    """The levels named (all by default) on ``runtimes``, plus each runtime's FP32 reference; with ``calib``
    (calibration text given) the data-aware levels too.

    Raises:
        InputError: an unknown level or runtime name, or a data-aware level named without calibration text.
    """
    known_runtimes = runtime_names()
    bad = [r for r in runtimes if r not in known_runtimes]
    if bad:
        raise InputError(f"unknown LLM runtime(s) {', '.join(bad)}: use {', '.join(known_runtimes)}")
    specs = [(d.name, spec) for d in exporting_runtimes(GENERATIVE) for spec in d.levels]
    known = sorted({spec.name for _, spec in specs})
    unknown = [n for n in names or [] if n not in known]
    if unknown:
        raise InputError(f"unknown LLM level(s) {', '.join(unknown)}; levels: {', '.join(known)}")
    aware = sorted({spec.name for _, spec in specs if spec.data_aware})
    asked_aware = [n for n in names or [] if n in aware]
    if asked_aware and not calib:
        raise InputError(f"level {asked_aware[0]} calibrates on text: give --calib TEXT (a file other than --eval)")
    wanted = set(names or known) | {REFERENCE}
    return [lv for lv in all_levels(calib=calib) if lv.runtime in runtimes and lv.name in wanted]


def build_level(level: LlmLevel, src: Path, source_sha256: str, out: Path,
                calib_text: Path | None = None) -> tuple[Path, bool]:
    """The level's folder under ``out`` (``<runtime>/<name>``), exported unless a matching build is there; returns
    (folder, reused). ``calib_text``: what a data-aware level calibrates on (its hash is part of the stamp)."""
    folder = out / level.runtime / level.name
    stamp: dict[str, object] = {"source_sha256": source_sha256, "runtime": level.runtime,
                                "settings": level.settings.model_dump()}
    data_aware = level.data_aware
    if data_aware:
        if calib_text is None:
            raise InputError(f"level {level.key} calibrates on text: give --calib TEXT")
        stamp["calib_sha256"] = sha256_file(calib_text)
    try:
        if read_json(folder / STAMP) == stamp:
            return folder, True
    except (OSError, ValueError):
        pass
    shutil.rmtree(folder, ignore_errors=True)
    level.exporter().export(src, folder, level.settings, calib_text=calib_text if data_aware else None)
    (folder / STAMP).write_text(json.dumps(stamp), encoding="utf-8")
    return folder, False
