"""The LLM sweep's host side: the inputs checked, the levels chosen and built here (the exporters need torch),
once, whether the levels are then measured on one runner or on every device of a fleet (:mod:`.sweep_fleet`).

The calibration text of the data-aware level (``int4-awq``) must not be the held-out eval text: a level fitted to
the text it is scored on would report a retention it does not have elsewhere.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, first_line
from ..registry import GENERATIVE, exporting_runtimes
from ..registry.lookup import detect_format, model_digest
from .folders import check_hf_folder
from .optimize import check_calib_text
from .ort_genai_export import LlmExportError
from .retention import SWEEP_METRIC, check_metric, read_text
from .sweep_levels import REFERENCE, LlmLevel, all_levels, build_level, runtime_names, select_levels
from .sweep_options import LlmSweepOptions

Say = Callable[[str], None]


@dataclass(frozen=True)
class LlmBuild:
    """What the host side hands the measuring side: the checked inputs and the levels built under ``levels_dir``.

    Attributes:
        levels: the levels that were built (each runtime's reference first among its own), in sweep order.
        reused: per level key, whether its folder was already built with these settings.
        warnings: the levels the exporter could not build, one line each.
    """

    src: Path
    digest: str
    metric: str
    eval_text: Path
    eval_sha256: str
    runtimes: tuple[str, ...]
    levels: tuple[LlmLevel, ...]
    reused: Mapping[str, bool]
    levels_dir: Path
    warnings: tuple[str, ...] = ()

    def folder(self, level: LlmLevel, root: Path | None = None) -> Path:
        """The level's folder under ``root`` (a copy of ``levels_dir`` elsewhere) or under ``levels_dir``."""
        return (root if root is not None else self.levels_dir) / level.runtime / level.name


def runtimes_for(wanted: list[str] | None) -> list[str]:
    """The runtimes named, else those installed here (the exporters run here)."""
    if wanted:
        return wanted
    found = [r.name for r in exporting_runtimes(GENERATIVE) if r.installed_here()]
    if not found:
        names = " nor ".join(r.display_name for r in exporting_runtimes(GENERATIVE))
        raise InputError(f"neither {names} is installed: pip install 'edgeopt[llm,torch]'")
    return found


def source_digest(model: Path) -> str:
    """The Hugging Face folder's content digest; anything else is an :class:`InputError`."""
    if not model.is_dir() or detect_format(model) != "hf_llm":
        raise InputError(f"{model} is not a Hugging Face decoder folder (config.json, *.safetensors, tokenizer): the "
                         "LLM sweep starts from the folder 'edgeopt optimize LLM_DIR' takes")
    check_hf_folder(model)
    return model_digest(model, "hf_llm")[0]


def check_calib(eval_text: Path, calib: Path | None) -> Path | None:
    """The calibration text, checked; None when none was given.

    Raises:
        InputError: it is the eval text (same file or same bytes: calibrating on it would leak the held-out
            data), or it is not usable text.
    """
    if calib is None:
        return None
    calib, eval_text = Path(calib), Path(eval_text)
    same = calib.is_file() and eval_text.is_file() and (
        calib.resolve() == eval_text.resolve() or calib.read_bytes() == eval_text.read_bytes())
    if same:
        raise InputError(f"--calib {calib} is the --eval text {eval_text}: calibrating on the held-out text leaks it "
                         "into the score; give separate calibration text")
    return check_calib_text(calib)


def choose_levels(opts: LlmSweepOptions, runtimes: list[str], say: Say) -> list[LlmLevel]:
    """The levels to sweep; says in one line why a data-aware level is not tried when no calibration text was
    given."""
    levels = select_levels(opts.levels, runtimes, calib=opts.calib_text is not None)
    aware = [lv for lv in all_levels(calib=True) if lv.data_aware]
    wanted = [lv for lv in aware if lv.runtime in runtimes and (opts.levels is None or lv.name in opts.levels)]
    if opts.calib_text is None:
        for lv in wanted:
            say(f"{lv.key} not tried: it calibrates on text; give --calib TEXT (not the --eval text)")
    elif not any(lv.data_aware for lv in levels):
        where = ", ".join(lv.key for lv in aware) or "none"
        say(f"--calib unused: no data-aware level is swept here (data-aware levels: {where})")
    return levels


def skip_level(level: LlmLevel, exc: Exception, warnings: list[str], say: Say) -> None:
    """A level that could not be built or measured: a ``warnings`` line and the sweep goes on; the reference's
    failure ends the sweep (``exc`` raised again), since every other level is judged against it."""
    if level.name == REFERENCE:
        raise exc
    warnings.append(f"{level.key} skipped: {first_line(exc)}")
    say(f"{level.key}: skipped ({first_line(exc, limit=160)})")


def build_levels(levels: list[LlmLevel], src: Path, digest: str, levels_dir: Path, calib: Path | None,
                 say: Say) -> tuple[list[LlmLevel], dict[str, bool], list[str]]:
    """Every level built (or reused) under ``levels_dir``: (built levels, reused per key, warnings). A level the
    exporter cannot build is a warning; a reference it cannot build ends the sweep (LlmExportError)."""
    built: list[LlmLevel] = []
    reused: dict[str, bool] = {}
    warnings: list[str] = []
    order_of = runtime_names()
    config = check_hf_folder(src)
    for level in sorted(levels, key=lambda lv: (order_of.index(lv.runtime), lv.name != REFERENCE)):
        say(f"{level.key}: building")
        try:
            why = level.exporter().cannot_apply(config, level.settings)
            if why:  # told by config.json before any export, not by the converter's last line
                raise LlmExportError(f"{level.key} cannot apply: {why}")
            _, reused[level.key] = build_level(level, src, digest, levels_dir, calib_text=calib)
        except LlmExportError as exc:
            skip_level(level, exc, warnings, say)
            continue
        built.append(level)
    order = {lv.key: i for i, lv in enumerate(levels)}
    return sorted(built, key=lambda lv: order[lv.key]), reused, warnings


def prepare_llm_sweep(model: Path, opts: LlmSweepOptions, levels_dir: Path, say: Say) -> LlmBuild:
    """Check the inputs and build every level under ``levels_dir``.

    Raises:
        InputError: a bad folder, text, calibration text, metric, level or runtime name (exit 2).
        LlmExportError: a runtime's FP32 reference could not be built.
    """
    metric = check_metric(opts.metric, SWEEP_METRIC)
    text = read_text(opts.eval_text)
    calib = check_calib(opts.eval_text, opts.calib_text)
    digest = source_digest(model)
    runtimes = runtimes_for(opts.runtimes)
    levels = choose_levels(opts, runtimes, say)
    built, reused, warnings = build_levels(levels, model, digest, levels_dir, calib, say)
    return LlmBuild(src=model, digest=digest, metric=metric, eval_text=Path(opts.eval_text),
                    eval_sha256=hashlib.sha256(text.encode()).hexdigest(), runtimes=tuple(runtimes),
                    levels=tuple(built), reused=reused, levels_dir=levels_dir, warnings=tuple(warnings))
