"""INT8 candidates built for OpenVINO: NNCF's accuracy-controlled quantization, and the QDQ model's float set.

Two ways to reach an accuracy threshold with INT8 on OpenVINO, both producing a file the agent benchmarks:

- :func:`nncf_accuracy_control`: ``nncf.quantize_with_accuracy_control`` on the FP32 model, with the sweep's own
  retention as the validation metric (``max_drop = 1 - min_retention``, absolute, since the reference scores 1).
  NNCF ranks its quantizer groups and reverts them to float until the drop is met. It validates with
  ``INFERENCE_PRECISION_HINT=f32`` (float parts in FP32, not the CPU's BF16 default). Bounded by
  ``max_num_iterations`` (reverted groups); NNCF has no time limit of its own. When it cannot reach the drop it
  still returns a model (it logs "could not achieve the required accuracy drop"): measure the candidate like any
  other. On PP-OCRv4 rec it did not converge in 20 minutes; bounded to 10 reverts it took 240 s and returned a
  model at 0.957 (benchmarks/results/research_int8_ov.md), so it is a candidate for models whose error sits in a
  few layers, within a time budget.
- :func:`write_float_set`: the project's calibrated QDQ model with chosen nodes back in float
  (:func:`.qdq_surgery.keep_float`), which OpenVINO runs as FakeQuantize/INT8 where Q/DQ remain. The float set
  comes from :mod:`.float_sets` (accuracy per millisecond lost on this runtime).

Plain inputs only (paths, arrays, a retention callable): no runner or sweep context.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from pydantic import BaseModel, ConfigDict, Field

from ...errors import InputError
from ...fsutil import atomic_write_bytes
from .qdq_surgery import keep_float

# outputs of the candidate on the validation samples NNCF picked (one list of output arrays per sample) and those
# samples' indices in ``samples`` (NNCF validates subsets and single items too) -> retention and, optionally, one
# value per sample (NNCF ranks its quantizer groups on those when given)
Retention = Callable[[list[list[np.ndarray]], list[int]], "tuple[float, list[float] | None]"]


class NncfAccuracyControl(BaseModel):
    """Settings of NNCF's accuracy-controlled quantization (the rare ones: NNCF's own defaults otherwise)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    subset_size: int = Field(default=300, ge=1, description="Calibration samples NNCF uses (at most those given).")
    max_num_iterations: int = Field(default=12, ge=1, description="Most quantizer groups reverted to float.")
    ranking_subset_size: int | None = Field(default=None, ge=1, description="Samples used to rank groups.")
    transformer: bool = Field(default=False, description="nncf.ModelType.TRANSFORMER (attention patterns).")
    fast_bias_correction: bool = Field(default=True, description="NNCF's fast bias correction (else the full one).")


@dataclass(frozen=True)
class NncfCandidate:
    """The OpenVINO IR NNCF wrote, how long it took, and how many FakeQuantize ops it kept."""

    path: Path
    seconds: float
    fake_quantize_ops: int


def _need_nncf() -> None:
    for pkg in ("openvino", "nncf"):
        if importlib.util.find_spec(pkg) is None:
            raise InputError(f"the OpenVINO INT8 candidate needs {pkg}: pip install 'edgeopt[openvino,nncf]'")


def _read(model: Path, shapes: Mapping[str, Sequence[int]] | None) -> Any:
    import openvino as ov

    if not model.is_file():
        raise InputError(f"model {model}: not found; give the FP32 ONNX model the sweep measured")
    m = ov.Core().read_model(str(model))
    if shapes:
        m.reshape({k: list(v) for k, v in shapes.items()})  # static shapes: what the run feeds
    return m


def nncf_accuracy_control(model: Path, out_xml: Path, *, samples: Sequence[Mapping[str, np.ndarray]],
                          retention: Retention, min_retention: float,
                          shapes: Mapping[str, Sequence[int]] | None = None,
                          settings: NncfAccuracyControl | None = None) -> NncfCandidate:
    """Quantize ``model`` with ``nncf.quantize_with_accuracy_control`` to ``min_retention``; save it as IR.

    Args:
        model: the FP32 ONNX model.
        out_xml: where the IR goes (``.xml`` + ``.bin``, written next to each other).
        samples: feeds by input name, batch 1 each; used for calibration and validation.
        retention: the sweep's retention of the candidate's outputs vs the reference (on FP32 OpenVINO).
        min_retention: the threshold; ``max_drop = 1 - min_retention`` absolute.
        shapes: static input shapes to compile with (the run's), or None to keep the model's.
        settings: NNCF options.

    Raises:
        InputError: NNCF or OpenVINO is missing, no samples, or a threshold outside (0, 1].
    """
    _need_nncf()
    if not samples:
        raise InputError("NNCF accuracy control needs calibration samples; pass --calib or --eval data")
    if not 0 < min_retention <= 1:
        raise InputError(f"min_retention {min_retention}: NNCF's drop is 1 - retention; use a value in (0, 1]")
    import nncf

    cfg = settings or NncfAccuracyControl()
    m = _read(model, shapes)
    names = [p.get_any_name() for p in m.inputs]
    feeds = [[np.asarray(s[n]) for n in names] for s in samples]
    dataset = nncf.Dataset(list(enumerate(feeds)), lambda item: item[1])  # validation sees the sample's index

    def validate(compiled: Any, data: Any) -> tuple[float, list[float] | None]:
        req = compiled.create_infer_request()
        items = list(data)
        outs = [[np.array(o) for o in req.infer(feed, share_inputs=True).to_tuple()] for _, feed in items]
        return retention(outs, [i for i, _ in items])

    started = time.perf_counter()
    restorer = nncf.AdvancedAccuracyRestorerParameters(max_num_iterations=cfg.max_num_iterations,
                                                       ranking_subset_size=cfg.ranking_subset_size)
    quantized = nncf.quantize_with_accuracy_control(
        m, dataset, dataset, validate, max_drop=round(1 - min_retention, 6), drop_type=nncf.DropType.ABSOLUTE,
        subset_size=min(cfg.subset_size, len(feeds)), fast_bias_correction=cfg.fast_bias_correction,
        model_type=nncf.ModelType.TRANSFORMER if cfg.transformer else None,
        advanced_accuracy_restorer_parameters=restorer)
    seconds = time.perf_counter() - started
    save_ir(quantized, out_xml)
    fq = sum(op.get_type_name() == "FakeQuantize" for op in quantized.get_ordered_ops())
    return NncfCandidate(path=out_xml, seconds=round(seconds, 2), fake_quantize_ops=fq)


def write_float_set(qdq: onnx.ModelProto, base: onnx.ModelProto, float_nodes: Sequence[str], out: Path,
                    op_types: Sequence[str] = ("Conv", "MatMul", "Gemm")) -> Path:
    """The calibrated QDQ model with ``float_nodes`` back in float, written atomically to ``out``."""
    atomic_write_bytes(out, keep_float(qdq, base, list(float_nodes), list(op_types)).SerializeToString())
    return out


def save_ir(model: Any, out_xml: Path) -> None:
    """Write an OpenVINO model as ``out_xml`` (+ ``.bin``) through a temporary name, so a killed write never leaves
    a half IR under the final name."""
    import openvino as ov

    out_xml.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_xml.with_name(out_xml.stem + ".part.xml")
    ov.save_model(model, str(tmp), compress_to_fp16=False)
    tmp.with_suffix(".bin").replace(out_xml.with_suffix(".bin"))
    tmp.replace(out_xml)
