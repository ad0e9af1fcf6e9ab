"""NNCF's accuracy-controlled quantization as an INT8 search candidate (the ``nncf`` INT8 backend a runtime's
descriptor offers: OpenVINO), with the sweep's own metric.

:func:`nncf_candidate` turns the sweep's eval data into NNCF's samples (batch 1 each, static shapes) and a retention
callable that scores NNCF's per-sample outputs against the reference model's outputs on that runtime (the sweep's
output selection, metric and labels, on exactly the samples NNCF validated). The IR NNCF writes is then measured
as a device trial like every other (:mod:`.nncf_trials`): NNCF returns a model even when it
misses the threshold.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...evaluation import retention as metric_retention
from ..measure import Context
from .host_eval import eval_arrays
from .ov import NncfAccuracyControl, NncfCandidate, nncf_accuracy_control

# most quantizer groups NNCF reverts to float (NNCF has no time limit of its own; each revert re-validates)
NNCF_MAX_ITERATIONS = 10


def eval_samples(eval_npz: Path) -> tuple[list[dict[str, np.ndarray]], dict[str, list[int]]]:
    arrays = {k: a for k, a in eval_arrays(eval_npz).items() if k != "labels"}
    n = min(len(a) for a in arrays.values())
    samples = [{k: a[i:i + 1] for k, a in arrays.items()} for i in range(n)]
    return samples, {k: [1, *a.shape[1:]] for k, a in arrays.items()}


def nncf_candidate(ctx: Context, model: Path, out_xml: Path, runtime: str,
                   max_num_iterations: int = NNCF_MAX_ITERATIONS) -> NncfCandidate:
    """``nncf.quantize_with_accuracy_control`` on ``model`` to the sweep's threshold, validated with its metric.

    Args:
        ctx: the sweep's context (eval data, metric, output selection, labels, threshold, reference outputs).
        model: the FP32 ONNX model (the sweep's reference).
        out_xml: where the IR goes.
        runtime: the runtime the candidate is measured on (its reference outputs are the ones compared).
        max_num_iterations: most quantizer groups NNCF reverts to float.
    """
    samples, shapes = eval_samples(ctx.eval_npz)
    ref_outs, names = ctx.reference(model, runtime)
    ref = ctx.selection.pick(ref_outs, names)

    def retention(outs: list[list[np.ndarray]], idx: list[int]) -> tuple[float, list[float] | None]:
        stacked = [np.concatenate([o[j] for o in outs]) for j in range(len(outs[0]))]
        got = ctx.selection.pick(stacked, names)
        labels = ctx.labels[idx] if ctx.labels is not None else None
        _, ret = metric_retention(ctx.metric, ref[idx], got.astype(ref.dtype, copy=False), labels)
        return float(ret), None

    return nncf_accuracy_control(model, out_xml, samples=samples, retention=retention,
                                 min_retention=ctx.min_retention, shapes=shapes,
                                 settings=NncfAccuracyControl(max_num_iterations=max_num_iterations))
