"""Prove a converted artifact against its ONNX reference: run both on the same samples in the runtime that loads
the artifact (onnxruntime, OpenVINO, ai-edge-litert/tflite_runtime) and compare outputs.

A conversion whose outputs diverge beyond the thresholds raises :class:`PassError`, so a broken model never
ships. A format whose runtime cannot run here (Core ML off macOS, a TensorRT engine) is checked structurally
by its pass and reported as "not run here".
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from .enums import Precision
from .passes.base import Artifact, ArtifactFormat, PassError

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


def runtime_for(fmt: ArtifactFormat) -> str | None:
    """The runtime that runs ``fmt`` on this machine, or None."""
    if fmt in (ArtifactFormat.ONNX, ArtifactFormat.TENSORRT_ONNX):
        return "onnxruntime"
    if fmt is ArtifactFormat.OPENVINO_IR and importlib.util.find_spec("openvino") is not None:
        return "openvino"
    if fmt is ArtifactFormat.TFLITE:
        for mod in ("ai_edge_litert", "tflite_runtime"):
            if importlib.util.find_spec(mod) is not None:
                return mod
    return None


def run_onnx(path: Path, samples: Sequence[dict[str, np.ndarray]]) -> list[list[np.ndarray]]:
    """Outputs of an ONNX model on onnxruntime (CPU), one list per sample."""
    import onnxruntime as ort

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return [[np.asarray(o) for o in sess.run(None, feed)] for feed in samples]


def run_artifact(art: Artifact, samples: Sequence[dict[str, np.ndarray]]) -> tuple[list[list[np.ndarray]], str]:
    """Outputs of ``art`` in the runtime that loads it here, and that runtime's name.

    Raises:
        PassError: no runtime for the format here, or the runtime rejects the model.
    """
    runtime = runtime_for(art.format)
    if runtime is None:
        raise PassError(f"no runtime for {art.format.value} models on this machine")
    try:
        if runtime == "onnxruntime":
            return run_onnx(Path(art.path), samples), runtime
        if runtime == "openvino":
            return _run_openvino(Path(art.path), samples), runtime
        return _run_tflite(Path(art.path), samples, runtime), runtime
    except PassError:
        raise
    except Exception as exc:  # each runtime raises its own types
        text = " ".join(str(exc).split())[:300]
        raise PassError(f"{runtime} cannot run {art.path} ({text}); the conversion produced a broken model") from exc


def _run_openvino(path: Path, samples: Sequence[dict[str, np.ndarray]]) -> list[list[np.ndarray]]:
    import openvino as ov

    compiled = ov.Core().compile_model(str(path), "CPU")
    request = compiled.create_infer_request()
    names = [i.get_any_name() for i in compiled.inputs]
    outs = []
    for feed in samples:
        result = request.infer(
            {n: feed[n] for n in names if n in feed} if set(names) <= set(feed) else list(feed.values())
        )
        outs.append([np.asarray(result[o]) for o in compiled.outputs])
    return outs


def _run_tflite(path: Path, samples: Sequence[dict[str, np.ndarray]], module: str) -> list[list[np.ndarray]]:
    if module == "ai_edge_litert":
        from ai_edge_litert.interpreter import Interpreter
    else:
        from tflite_runtime.interpreter import Interpreter

    interp = Interpreter(model_path=str(path))
    interp.allocate_tensors()
    ins, outs_d = interp.get_input_details(), interp.get_output_details()
    results = []
    for feed in samples:
        values = list(feed.values())
        for k, d in enumerate(ins):
            x = np.asarray(feed.get(d["name"], values[k] if k < len(values) else None))
            interp.set_tensor(d["index"], to_tflite_input(x, d))
        interp.invoke()
        results.append([from_tflite_output(interp.get_tensor(d["index"]), d) for d in outs_d])
    return results


def to_tflite_input(x: np.ndarray, detail: dict[str, Any]) -> np.ndarray:
    """An NCHW float feed made to fit a TFLite input: transposed to NHWC when needed, quantized for int8/uint8."""
    shape = tuple(int(s) for s in detail["shape"])
    if x.shape != shape and x.ndim == 4 and x.transpose(0, 2, 3, 1).shape == shape:
        x = x.transpose(0, 2, 3, 1)
    dtype = np.dtype(detail["dtype"])
    if dtype.kind in "iu":
        scale, zero = detail["quantization"]
        info = np.iinfo(dtype)
        x = np.clip(np.round(x / (scale or 1.0) + zero), info.min, info.max)
    return np.ascontiguousarray(x.astype(dtype))


def from_tflite_output(y: np.ndarray, detail: dict[str, Any]) -> np.ndarray:
    """A TFLite output dequantized to float32."""
    if np.dtype(detail["dtype"]).kind in "iu":
        scale, zero = detail["quantization"]
        return (y.astype(np.float32) - zero) * (scale or 1.0)
    return np.asarray(y, dtype=np.float32)


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
