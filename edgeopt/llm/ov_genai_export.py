"""Build an OpenVINO GenAI folder (:mod:`edgeopt.llm.ov_convert`) in a child process, offline.

A child process because the conversion holds torch, transformers and the model in memory, and NNCF prints its
own tables; ``HF_HUB_OFFLINE=1`` is set for it.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..inbound import read_json
from .exporter import ExportOutcome, LlmExporter, width_problem
from .folders import check_ov_genai_folder
from .ort_genai_export import LlmExportError
from .recipe import OvGenaiSettings

NEEDED = ("openvino", "openvino_tokenizers", "nncf", "torch", "transformers")


def export_ov_genai(src: Path, out: Path, settings: OvGenaiSettings, *, calib_text: Path | None = None,
                    timeout_s: float = 3600) -> tuple[float, dict[str, Any]]:
    """Build the folder ``out`` from the Hugging Face folder ``src``; return (seconds, the converter's facts).
    ``calib_text``: the text AWQ / scale estimation calibrate on (required when ``settings.data_aware``).

    Raises:
        LlmExportError: a package is missing, the conversion failed or timed out, or its folder is incomplete.
    """
    missing = [m for m in NEEDED if importlib.util.find_spec(m) is None]
    if missing:
        raise LlmExportError(f"the OpenVINO GenAI export needs {', '.join(missing)}: pip install "
                             "'edgeopt[llm,torch]'")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TQDM_DISABLE": "1"}
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="edgeopt-ov-") as tmp:
        report = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "edgeopt.llm.ov_convert", str(src), str(out), "--weights", settings.weights,
               "--group-size", str(settings.group_size), "--ratio", str(settings.ratio), "--report", str(report)]
        if settings.data_aware and calib_text is not None:
            cmd += ["--calib-text", str(calib_text), "--calib-samples", str(settings.calib_samples),
                    "--calib-tokens", str(settings.calib_tokens)]
            cmd += ["--awq"] * settings.awq + ["--scale-estimation"] * settings.scale_estimation
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            raise LlmExportError(f"the OpenVINO GenAI conversion ran over {timeout_s:.0f} s on {src}") from None
        if proc.returncode != 0:
            lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
            raise LlmExportError(f"the OpenVINO GenAI conversion failed on {src} (exit {proc.returncode}): "
                                 f"{lines[-1] if lines else 'no output'}")
        facts = read_json(report)
    check_ov_genai_folder(out)
    return time.monotonic() - start, facts


def _pass_config(settings: OvGenaiSettings, calib: Path | None) -> dict[str, Any]:
    """The OpenVINO export's settings as recorded: the calibration fields only for a data-aware recipe."""
    if not settings.data_aware:
        return settings.model_dump(exclude={"awq", "scale_estimation", "calib_samples", "calib_tokens"})
    return {**settings.model_dump(), "calib_text": str(calib)}


class OvGenaiExporter(LlmExporter):
    """The direct stateful conversion with NNCF weight compression (the ``openvino_genai`` runtime's exporter)."""

    runtime = "openvino_genai"
    settings_model = OvGenaiSettings
    pass_name = "openvino_genai_convert"
    versioned = ("openvino", "openvino-genai", "openvino-tokenizers", "nncf", "transformers", "torch", "tokenizers",
                 "safetensors")

    def cannot_apply(self, config: Mapping[str, Any], settings: BaseModel) -> str | None:
        if isinstance(settings, OvGenaiSettings) and settings.weights.startswith("int4"):
            return width_problem(config, settings.group_size, "int4 group size")
        return None

    def export(self, src: Path, out: Path, settings: BaseModel, *, calib_text: Path | None = None) -> ExportOutcome:
        assert isinstance(settings, OvGenaiSettings)
        calib = calib_text if settings.data_aware else None
        seconds, facts = export_ov_genai(src, out, settings, calib_text=calib)
        return ExportOutcome(seconds=seconds, pass_name=self.pass_name, pass_config=_pass_config(settings, calib),
                             report={k: facts[k] for k in ("op_counts", "weight_types", "calibration_windows")
                                     if k in facts})


EXPORTER = OvGenaiExporter()
