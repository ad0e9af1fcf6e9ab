"""NNCF's own repairs of quantization error, tried on the host before OpenVINO keeps any layer in float.

``nncf.quantize`` offers repairs as global switches, not per layer, so each is one candidate model (an OpenVINO IR,
every quantizable op in INT8): its range estimator for activations (min-max, or the mean of per-sample quantiles,
which ignores rare outliers), bias correction (fast, NNCF's default, or the full one, which corrects each layer's
output mean on the calibration data layer by layer: slower, more exact), and SmoothQuant (moves activation
outliers into the weights; NNCF applies it to MatMul of transformer models only, so it is tried only where the
model has a MatMul with a weight). :func:`repairs_for` lists those that apply, cheapest first;
:func:`quantize_ir` builds one; :func:`host_retention` scores it on the host's OpenVINO CPU at f32 float parts
against the FP32 model there. The search (:mod:`.nncf_trials`) takes the first that keeps the threshold on the host
and confirms it with one device trial; only when none does, the float-set search runs.

Plain inputs only (paths, feeds, a retention callable): no runner or sweep context.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from ...errors import InputError
from .ov import _need_nncf, _read, save_ir
from .range_repair import HOPELESS_SHARE, gap_share

# the candidates' order: the cheapest to build first (full bias correction re-runs the model layer by layer)
RANGE_QUANTILE = "mean_quantile"
# Each repair's host time over NNCF's defaults', measured on 2 busy cores: PP-OCRv4 det 34 s (defaults), 89 s
# (mean-quantile: per-sample quantiles of every activation), 49 s (full bias correction); the text-orientation
# classifier 7.8 s and 25.8 s. A later candidate starts only when the time spent plus this times the defaults' time
# stays within the allowance (:func:`try_repairs`).
RELATIVE_COST = {"range_mean_quantile": 3.3, "bias_correction": 1.5, "smooth_quant": 1.2}


@dataclass(frozen=True)
class NncfRepair:
    """One ``nncf.quantize`` configuration: its name, what it repairs, and its options (recorded as is)."""

    name: str
    repairs: str
    options: dict[str, Any] = field(default_factory=dict)
    relative_cost: float = 1.0  # its host time over NNCF's defaults' (:data:`RELATIVE_COST`)
    kind: str = ""  # what it repairs (bias, ranges, smoothing): a kind that barely helped is not tried again


def repairs_for(model: onnx.ModelProto) -> tuple[list[NncfRepair], dict[str, str]]:
    """The NNCF repairs that apply to ``model``, cheapest first, and those that do not, each with why."""
    inits = {t.name for t in model.graph.initializer}
    weighted_matmul = any(n.op_type in {"MatMul", "Gemm"} and any(i in inits for i in n.input)
                          for n in model.graph.node)
    out = [
        NncfRepair("fast_bias_correction", "NNCF's defaults: min-max ranges, fast bias correction", {}, kind="bias"),
        NncfRepair("range_mean_quantile", "activation ranges from the mean of per-sample quantiles: rare outliers "
                   "no longer stretch a range", {"range_estimator": RANGE_QUANTILE},
                   RELATIVE_COST["range_mean_quantile"], kind="ranges"),
        NncfRepair("bias_correction", "full bias correction: each layer's output mean corrected on the calibration "
                   "data, layer by layer", {"fast_bias_correction": False}, RELATIVE_COST["bias_correction"],
                   kind="bias"),
    ]
    skipped: dict[str, str] = {}
    if weighted_matmul:
        out.append(NncfRepair("smooth_quant", "SmoothQuant: activation outliers moved into the MatMul weights "
                              "(alpha 0.95)", {"smooth_quant": True}, RELATIVE_COST["smooth_quant"], kind="smoothing"))
    else:
        skipped["smooth_quant"] = "no MatMul with a weight: NNCF's SmoothQuant applies to transformer MatMuls only"
    return out, skipped


def quantize_ir(model: Path, out_xml: Path, repair: NncfRepair, feeds: Sequence[Mapping[str, np.ndarray]],
                shapes: Mapping[str, Sequence[int]] | None = None) -> float:
    """``nncf.quantize`` of the FP32 ``model`` with ``repair``'s options, saved as IR at ``out_xml``.

    Returns:
        CPU seconds NNCF took in this process (its threads and OpenVINO's together).

    Raises:
        InputError: NNCF or OpenVINO is missing, or no calibration feeds.
    """
    _need_nncf()
    if not feeds:
        raise InputError("NNCF repairs need calibration samples; pass --calib or --eval data")
    import nncf
    from nncf.quantization.advanced_parameters import AdvancedQuantizationParameters, AdvancedSmoothQuantParameters
    from nncf.quantization.range_estimator import RangeEstimatorParametersSet

    m = _read(model, shapes)
    names = [p.get_any_name() for p in m.inputs]
    items = [[np.asarray(f[n]) for n in names] for f in feeds]
    opts = repair.options
    adv = AdvancedQuantizationParameters()
    if opts.get("range_estimator") == RANGE_QUANTILE:
        adv.activations_range_estimator_params = RangeEstimatorParametersSet.MEAN_QUANTILE
    if opts.get("smooth_quant"):
        adv.smooth_quant_alphas = AdvancedSmoothQuantParameters(matmul=0.95)
    started = time.process_time()  # this process's CPU time (NNCF and OpenVINO's threads): a loaded host's wall
    quantized = nncf.quantize(m, nncf.Dataset(items), subset_size=len(items),
                              fast_bias_correction=bool(opts.get("fast_bias_correction", True)),
                              model_type=nncf.ModelType.TRANSFORMER if opts.get("smooth_quant") else None,
                              advanced_parameters=adv)
    cpu_seconds = time.process_time() - started
    save_ir(quantized, out_xml)
    return round(cpu_seconds, 2)


def ov_outputs(model: Path, feeds: Sequence[Mapping[str, np.ndarray]],
               shapes: Mapping[str, Sequence[int]] | None = None) -> tuple[list[np.ndarray], list[str]]:
    """Every output of ``model`` on the host's OpenVINO CPU (float parts f32), stacked over ``feeds``."""
    import openvino as ov

    compiled = ov.Core().compile_model(_read(model, shapes), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    req = compiled.create_infer_request()
    names = [o.get_any_name() for o in compiled.outputs]
    per = [[np.array(o) for o in req.infer(dict(f)).to_tuple()] for f in feeds]
    return [np.concatenate([p[j] for p in per]) for j in range(len(names))], names


def host_retention(xml: Path, feeds: Sequence[Mapping[str, np.ndarray]],
                   retention: Callable[[list[np.ndarray], list[str]], float],
                   shapes: Mapping[str, Sequence[int]] | None = None) -> float:
    """The sweep's retention of the IR ``xml`` on the host (``retention`` compares its outputs with the FP32
    model's on the same OpenVINO)."""
    outs, names = ov_outputs(xml, feeds, shapes)
    return float(retention(outs, names))


# NNCF's repairs get this much host CPU time (CPU-s of this process, NNCF's and OpenVINO's threads together; wall
# time would shrink the allowance on a loaded host) by default (``--nncf-budget-s`` > 0 gives them that budget
# instead): on PP-OCRv4 det (480x640, 8 samples, 2 busy cores) NNCF's defaults took 34 s of wall time (about twice
# that in CPU-s), the mean-quantile estimator 89 s and full bias correction 49 s, and none came near the 0.99
# threshold (mask IoU 0.733, 0.529, 0.733), so a model that large gets none unless asked; the small models whose
# error sits in a few ranges get all of them.
REPAIR_ALLOWANCE_S = 40.0
# NNCF's defaults cost about this many FP32 passes over the calibration samples on the host (statistics, bias
# correction, graph transformation; 34 s against ~1.6 s for PP-OCRv4 det's 8 samples), plus a fixed overhead.
NNCF_PASSES = 20.0
NNCF_OVERHEAD_S = 2.0


def expected_seconds(fp32_pass_s: float, eval_samples: int, calib_samples: int) -> float:
    """What NNCF's default quantization should cost on the host (CPU-s), from one FP32 pass's CPU-s over
    ``eval_samples``."""
    return NNCF_OVERHEAD_S + NNCF_PASSES * fp32_pass_s * calib_samples / max(eval_samples, 1)


Built = tuple[Path, float, float]  # the IR, CPU seconds NNCF took, host retention
Rows = list[dict[str, Any]]


def try_repairs(repairs: Sequence[NncfRepair], build: Callable[[NncfRepair], Built], threshold: float, *,
                budget: Callable[[], bool] = lambda: True, allowance_s: float = REPAIR_ALLOWANCE_S,
                baseline: float | None = None, cannot_pass: Callable[[NncfRepair], str | None] = lambda _: None,
                ) -> tuple[Rows, tuple[NncfRepair, Path] | None]:
    """Each repair in order (cheapest first) built and scored on the host until one keeps ``threshold``, while
    the NNCF CPU time spent stays under ``allowance_s`` (CPU-s; the first is always built) and, for a later one, the
    CPU time spent plus its expected CPU time (its ``relative_cost`` times the first's) stays within it, and
    ``cannot_pass`` (a bound, :mod:`.repair_bounds`) gives no reason it cannot keep ``threshold``. With
    ``baseline`` (plain min-max INT8's host retention), a repair that closed under :data:`.range_repair.
    HOPELESS_SHARE` of the gap to ``threshold`` rules out the later ones of its kind (NNCF's fast bias correction
    barely helping says the error is not in the biases, so the full one, 1.5x its cost, is not built).

    Returns:
        One row per repair considered (name, what it repairs, options, cpu_seconds, host retention, or why it was
        not tried), and the first that kept the threshold with its IR (None when none did).
    """
    rows: Rows = []
    ruled_out: dict[str, str] = {}  # kind -> why its later repairs are not tried
    for rep in repairs:
        spent = sum(float(r.get("cpu_seconds", 0.0)) for r in rows)
        row: dict[str, Any] = {"name": rep.name, "repairs": rep.repairs, "options": dict(rep.options)}
        rows.append(row)
        if rep.kind in ruled_out:
            row["not_tried"] = ruled_out[rep.kind]
            continue
        if rows[:-1] and spent >= allowance_s:
            row["not_tried"] = f"NNCF took {spent:g} CPU-s already (allowance {allowance_s:g} CPU-s)"
            continue
        first = float(rows[0].get("cpu_seconds", 0.0))
        if rows[:-1] and spent + rep.relative_cost * first > allowance_s:
            row["not_tried"] = (f"expected ~{rep.relative_cost * first:.0f} CPU-s ({rep.relative_cost:g}x NNCF's "
                                f"defaults' {first:g} CPU-s) after {spent:g} CPU-s spent: over the allowance "
                                f"({allowance_s:g} CPU-s)")
            continue
        if not budget():
            row["not_tried"] = "search time ran out"
            break
        why = cannot_pass(rep)
        if why is not None:
            row["not_tried"] = why
            continue
        xml, seconds, ret = build(rep)
        row.update(cpu_seconds=seconds, host_retention=round(ret, 6), passes_on_host=ret >= threshold)
        if ret >= threshold:
            return rows, (rep, xml)
        share = gap_share(baseline, ret, threshold) if baseline is not None else 1.0
        if rep.kind and share < HOPELESS_SHARE:
            ruled_out[rep.kind] = (f"{rep.name} closed {share:.0%} of the gap between plain min-max INT8 "
                                   f"({baseline:.4f}) and the threshold {threshold} (under {HOPELESS_SHARE:.0%}): "
                                   f"the error is not where a {rep.kind} repair works")
    return rows, None
