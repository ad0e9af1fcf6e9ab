"""Prove a converted artifact against its ONNX reference: run both on the same samples in the runtime that loads
the artifact (onnxruntime, OpenVINO, ai-edge-litert/tflite_runtime) and compare outputs.

Which runtime proves a format is the format descriptor's ``validated_by``; how that runtime runs a model on
this host is its runtime descriptor's ``host_infer`` (:mod:`edgeopt.registry`). A conversion whose outputs
diverge beyond the thresholds raises :class:`PassError`, so a broken model never ships. A format whose runtime
cannot run here (Core ML off macOS, a TensorRT engine) is checked structurally by its pass and reported as
"not run here".
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..enums import Precision
from ..errors import first_line
from ..registry import get_format, get_runtime
from ..registry.runtimes.tflite import from_tflite_output, to_tflite_input
from .base import Artifact, ArtifactFormat, PassError

__all__ = ["MIN_COSINE", "MIN_TOP1", "Validation", "compare", "from_tflite_output", "run_artifact", "run_onnx",
           "runtime_for", "to_tflite_input", "validate_artifact"]

# Minimum cosine similarity / top-1 agreement by artifact precision; below them the conversion failed.
MIN_COSINE = {
    Precision.FP32: 0.999,
    Precision.FP16: 0.99,
    Precision.BF16: 0.99,
    Precision.INT8: 0.9,
    Precision.INT4: 0.8,
}
MIN_TOP1 = {Precision.FP32: 0.99, Precision.FP16: 0.95, Precision.BF16: 0.95, Precision.INT8: 0.6, Precision.INT4: 0.5}


TOP1_WAIVER_COSINE = 0.995


class Validation(BaseModel):
    """One artifact run next to the ONNX reference on the same samples."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    artifact: str = Field(description="Artifact name.")
    format: ArtifactFormat = Field(description="Artifact format.")
    runtime: str | None = Field(description="Runtime that ran it here; None when it cannot run on this machine.")
    samples: int = Field(description="Samples compared.")
    max_abs_error: float | None = Field(default=None, description="Largest |artifact - reference| over outputs.")
    cosine_similarity: float | None = Field(default=None, description="Lowest cosine similarity over the outputs.")
    top1_agreement: float | None = Field(default=None, description="Share of samples with the reference's argmax.")
    passed: bool | None = Field(description="Within the thresholds; None when not run here.")
    note: str | None = Field(default=None, description="Why it was not run, or what was transposed/dequantized.")


def _host_runner(fmt: ArtifactFormat) -> tuple[str, str] | None:
    """(runtime, module) that proves ``fmt`` on this machine: the first of its ``validated_by`` runtimes whose
    host module is importable; None when none is."""
    for name in get_format(fmt).validated_by:
        module = get_runtime(name).host_validator()
        if module is not None:
            return name, module
    return None


def runtime_for(fmt: ArtifactFormat) -> str | None:
    """The runtime that runs ``fmt`` on this machine (named by its host module, e.g. ``ai_edge_litert``), or None."""
    found = _host_runner(fmt)
    return found[1] if found else None


def run_onnx(path: Path, samples: Sequence[dict[str, np.ndarray]]) -> list[list[np.ndarray]]:
    """Outputs of an ONNX model on onnxruntime (CPU), one list per sample.

    Raises:
        PassError: onnxruntime cannot load the model or run it on ``samples``.
    """
    try:
        return get_runtime("onnxruntime").host_infer(path, samples, "onnxruntime")
    except PassError:
        raise
    except Exception as exc:  # onnxruntime raises its own types (InvalidArgument, Fail, ...)
        raise PassError(f"onnxruntime cannot run the reference {path} ({first_line(exc)}); check the recipe's "
                        "input/output types (e.g. fp16 keep_io_types)") from exc


def run_artifact(art: Artifact, samples: Sequence[dict[str, np.ndarray]]) -> tuple[list[list[np.ndarray]], str]:
    """Outputs of ``art`` in the runtime that loads it here, and that runtime's name.

    Raises:
        PassError: no runtime for the format here, or the runtime rejects the model.
    """
    found = _host_runner(art.format)
    if found is None:
        raise PassError(f"no runtime for {art.format.value} models on this machine")
    runtime, module = found
    try:
        return get_runtime(runtime).host_infer(Path(art.path), samples, module), module
    except PassError:
        raise
    except Exception as exc:  # each runtime raises its own types
        text = " ".join(str(exc).split())[:300]
        raise PassError(f"{module} cannot run {art.path} ({text}); the conversion produced a broken model") from exc


def _align(ref: np.ndarray, got: np.ndarray) -> tuple[np.ndarray | None, str | None]:
    if ref.shape == got.shape:
        return got, None
    if ref.size == got.size and got.ndim == 4 and got.transpose(0, 3, 1, 2).shape == ref.shape:
        return got.transpose(0, 3, 1, 2), "NHWC output compared as NCHW"
    if ref.size == got.size:
        return got.reshape(ref.shape), f"output reshaped {got.shape} -> {ref.shape}"
    return None, f"output shape {got.shape} differs from the reference {ref.shape}"


def compare(ref: list[list[np.ndarray]], got: list[list[np.ndarray]]) -> dict[str, Any]:
    """max abs error, lowest cosine and top-1 agreement of ``got`` vs ``ref`` (outputs matched by position)."""
    max_err, cosines, notes = 0.0, [], []
    n_out = min(len(ref[0]), len(got[0]))
    aligned: list[list[np.ndarray]] = [[] for _ in ref]
    for k in range(n_out):
        for i in range(len(ref)):
            g, note = _align(ref[i][k], got[i][k])
            if g is None:
                raise PassError(f"converted model output {k}: {note}; the conversion changed the model's outputs")
            if note and note not in notes:
                notes.append(note)
            aligned[i].append(g)
        a = np.concatenate([np.asarray(s[k], np.float64).ravel() for s in ref])
        b = np.concatenate([np.asarray(s[k], np.float64).ravel() for s in aligned])
        max_err = max(max_err, float(np.abs(a - b).max(initial=0.0)))
        denom = float(np.linalg.norm(a) * np.linalg.norm(b))
        cosines.append(float(a @ b) / denom if denom > 0 else (1.0 if np.allclose(a, b) else 0.0))
    top1 = None
    first = ref[0][0]
    if first.ndim in (1, 2) and first.shape[-1] > 1 and first.size == first.shape[-1]:
        top1 = float(
            np.mean([int(np.argmax(r[0])) == int(np.argmax(g[0])) for r, g in zip(ref, aligned, strict=False)])
        )
    return {
        "max_abs_error": round(max_err, 6),
        "cosine_similarity": round(min(cosines), 6) if cosines else None,
        "top1_agreement": round(top1, 4) if top1 is not None else None,
        "note": "; ".join(notes) or None,
    }


def validate_artifact(
    art: Artifact, reference: Path, samples: Sequence[dict[str, np.ndarray]], *, strict: bool = True
) -> Validation:
    """Run ``art`` and the ONNX ``reference`` on ``samples`` and compare.

    Args:
        art: the converted artifact.
        reference: the ONNX model it was made from (FP32 ideally).
        samples: feeds keyed by the reference's input names.
        strict: raise when the outputs diverge beyond :data:`MIN_COSINE` / :data:`MIN_TOP1`.

    Raises:
        PassError: the artifact does not run, or (``strict``) its outputs diverge.
    """
    runtime = runtime_for(art.format)
    if runtime is None:
        return Validation(
            artifact=art.name,
            format=art.format,
            runtime=None,
            samples=0,
            passed=None,
            note=f"no {art.format.value} runtime on this machine: validated on the device only",
        )
    ref = run_onnx(reference, samples)
    got, runtime = run_artifact(art, samples)
    values = compare(ref, got)
    cos, top1 = values["cosine_similarity"], values["top1_agreement"]
    min_cos, min_top1 = MIN_COSINE[art.precision], MIN_TOP1[art.precision]
    # top-1 alone fails only with a weak cosine: on random inputs near-tied logits flip without any real error
    ok = (cos is None or cos >= min_cos) and (top1 is None or top1 >= min_top1 or (cos or 0) >= TOP1_WAIVER_COSINE)
    if strict and not ok:
        raise PassError(
            f"{art.path} ({art.format.value}, {art.precision.value}) diverges from {reference.name} on "
            f"{len(samples)} samples: cosine {cos} (min {min_cos}), top-1 agreement {top1} (min {min_top1}), "
            f"max abs error {values['max_abs_error']}; not shipping it: try a higher precision or other calib data"
        )
    return Validation(artifact=art.name, format=art.format, runtime=runtime, samples=len(samples), passed=ok, **values)
