"""Host-side proxy of the sweep's retention: in-memory models on onnxruntime (CPU), the sweep's metric and output.

The accuracy-aware INT8 search ranks nodes and narrows its exclusion sets here, where a trial is a graph edit and
one ``InferenceSession``; only the candidates it settles on are measured on the target (which decides pass/fail).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import onnx

from ...errors import InputError
from ...evaluation import Metric, OutputSelection, retention
from ...inbound import load_arrays

BATCH = 32  # samples per run when the model's batch axis is dynamic


class HostEval:
    """Scores candidate models against ``base`` on the eval samples."""

    def __init__(self, base: onnx.ModelProto, eval_npz: Path, metric: Metric, selection: OutputSelection,
                 labels: np.ndarray | None) -> None:
        self.metric, self.selection, self.labels = metric, selection, labels
        graph_inputs = [i for i in base.graph.input if i.name not in {t.name for t in base.graph.initializer}]
        data = eval_arrays(eval_npz)
        names = list(data)
        keys = [i.name if i.name in data else names[k] for k, i in enumerate(graph_inputs)]
        self.feeds = {i.name: np.asarray(data[k]) for i, k in zip(graph_inputs, keys, strict=True)}
        self.count = len(next(iter(self.feeds.values())))
        self.batched = all(_dynamic_batch(i) for i in graph_inputs)
        self.reference = self.outputs(base)
        self.seconds = 0.0  # spent in :meth:`score` (the search's ``phase_seconds.host_checks_within``)
        self.calls = 0

    def outputs(self, model: onnx.ModelProto, limit: int | None = None) -> np.ndarray:
        """The selected output of ``model`` on the first ``limit`` samples (all by default)."""
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.log_severity_level = 3
        sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        n = min(limit or self.count, self.count)
        step = BATCH if self.batched else 1
        chunks: list[list[np.ndarray]] = []
        for lo in range(0, n, step):
            feeds = {k: v[lo:min(n, lo + step)] for k, v in self.feeds.items()}
            chunks.append([np.asarray(o) for o in sess.run(names, feeds)])
        outs = [np.concatenate([c[i] for c in chunks]) for i in range(len(names))]
        return self.selection.pick(outs, names)

    def score(self, model: onnx.ModelProto, limit: int | None = None) -> tuple[float, float]:
        """``(retention, relative L2 error)`` of ``model``'s selected output vs the base model's."""
        t0 = time.perf_counter()
        out = self.outputs(model, limit)
        self.seconds += time.perf_counter() - t0
        self.calls += 1
        ref = self.reference[:len(out)]
        labels = None if self.labels is None else self.labels[:len(out)]
        _, ret = retention(self.metric, ref, out.astype(ref.dtype, copy=False), labels)
        a = ref.astype(np.float64)
        rel = float(np.linalg.norm(out.astype(np.float64) - a) / (np.linalg.norm(a) or 1.0))
        return ret, rel


def eval_arrays(eval_npz: Path) -> dict[str, np.ndarray]:
    """The arrays of an eval ``.npz`` by member name, through the one reader (headers before loading)."""
    data = load_arrays(eval_npz)
    if not isinstance(data, dict):
        raise InputError(f"{eval_npz}: a single .npy array, not an .npz of eval inputs; save it with np.savez")
    return data


def _dynamic_batch(value: onnx.ValueInfoProto) -> bool:
    dims = value.type.tensor_type.shape.dim
    return bool(dims) and not dims[0].HasField("dim_value")
