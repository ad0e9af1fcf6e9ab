"""Build an onnxruntime-genai folder with its own model builder, offline, in a child process.

The builder (``python -m onnxruntime_genai.models.builder``) is run as a separate process: it holds the whole
model in memory, prints progress bars, and its Python API wants options pre-processed by its own CLI parser.
``HF_HUB_OFFLINE=1`` is set for it so a folder missing a file fails at once instead of reaching for the hub.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..errors import InputError
from .exporter import ExportOutcome, LlmExporter
from .folders import check_genai_folder
from .recipe import OrtGenaiSettings

BUILDER_MODULE = "onnxruntime_genai.models.builder"


class LlmExportError(InputError):
    """An exporter failed on an LLM folder (its last output line says why)."""


def builder_command(src: Path, out: Path, settings: OrtGenaiSettings, cache_dir: Path,
                    execution_provider: str = "cpu") -> list[str]:
    """The builder's command line for ``settings``."""
    cmd = [sys.executable, "-m", BUILDER_MODULE, "-i", str(src), "-o", str(out), "-p", settings.precision,
           "-e", execution_provider, "-c", str(cache_dir)]
    options = settings.builder_options()
    if options:
        cmd += ["--extra_options", *(f"{k}={v}" for k, v in options.items())]
    return cmd


def export_ort_genai(src: Path, out: Path, settings: OrtGenaiSettings, *, timeout_s: float = 3600) -> float:
    """Build the folder ``out`` from the Hugging Face folder ``src``; return the seconds it took.

    Raises:
        LlmExportError: onnxruntime-genai is not installed, the builder failed or timed out, or its folder is
            incomplete.
    """
    if importlib.util.find_spec("onnxruntime_genai") is None:
        raise LlmExportError("onnxruntime-genai is not installed: pip install 'edgeopt[llm,torch]'")
    out.mkdir(parents=True, exist_ok=True)
    cache_dir = out.parent / f".{out.name}-builder-cache"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TQDM_DISABLE": "1"}
    start = time.monotonic()
    try:
        proc = subprocess.run(builder_command(src, out, settings, cache_dir), env=env, capture_output=True,
                              text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise LlmExportError(f"the onnxruntime-genai builder ran over {timeout_s:.0f} s on {src}") from None
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
        raise LlmExportError(f"the onnxruntime-genai builder failed on {src} (exit {proc.returncode}): "
                             f"{lines[-1] if lines else 'no output'}")
    _remove_tree(cache_dir)
    check_genai_folder(out)
    return time.monotonic() - start


def _remove_tree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def op_counts(folder: Path) -> dict[str, int]:
    """Operator counts of the folder's decoder graph (weights not loaded): proof of what the builder made."""
    import onnx

    config = check_genai_folder(folder)
    model = onnx.load(str(folder / config["model"]["decoder"]["filename"]), load_external_data=False)
    return dict(sorted(Counter(node.op_type for node in model.graph.node).items()))


class OrtGenaiExporter(LlmExporter):
    """onnxruntime-genai's model builder (the ``onnxruntime_genai`` runtime's exporter)."""

    runtime = "onnxruntime_genai"
    settings_model = OrtGenaiSettings
    pass_name = "onnxruntime_genai_builder"
    versioned = ("onnxruntime-genai", "onnxruntime", "transformers", "torch", "tokenizers", "safetensors")

    def cannot_apply(self, config: Mapping[str, Any], settings: BaseModel) -> str | None:
        if getattr(settings, "precision", None) == "fp16":
            return ("onnxruntime-genai's fp16 export computes in fp16, which its CPU execution provider cannot run "
                    "(a Cast kernel fails at load): use fp32, int8 or int4 for a CPU")
        return None

    def export(self, src: Path, out: Path, settings: BaseModel, *, calib_text: Path | None = None) -> ExportOutcome:
        assert isinstance(settings, OrtGenaiSettings)
        seconds = export_ort_genai(src, out, settings)
        return ExportOutcome(seconds=seconds, pass_name=self.pass_name,
                             pass_config={**settings.model_dump(), "execution_provider": "cpu"},
                             report={"op_counts": op_counts(out)})


EXPORTER = OrtGenaiExporter()
