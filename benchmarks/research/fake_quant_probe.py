"""Research (not used by the sweep): per-node INT8 sensitivity in one onnxruntime session, a switch model that
fake-quantizes one node at a time. ``benchmarks/research/float_set_bound.py`` measures whether ordering the float-set
search by it helps (session 18, PP-OCRv4 det: it did not enough to pay its 30 s; see that script).

The latency-aware float-set search (:mod:`.float_sets`) packs the nodes that save the most time per accuracy lost
into INT8 first. Without a per-node sensitivity it orders by time saved alone, and on PP-OCRv4 det its 24 device
evaluations accepted 3-7 of 62 convolutions at mask IoU 0.99: most tries spent the accuracy budget on a node that
breaks the threshold. Measuring "only this node quantized" the plain way costs one session per node (a graph edit,
a session build and the samples each: ~60 host evaluations on the detector).

The switch model does it in one session. It is the calibrated QDQ model in which every input a node reads through
a ``DequantizeLinear`` is mixed with the float tensor it came from, under that node's switch::

    x_used = x_float + s[node] * (DequantizeLinear(QuantizeLinear(x_float)) - x_float)

(weights and biases likewise, against the float model's initializers; a quantized tensor that a node of another
type reads, or a graph output, follows the switch of the node that produced it). With every switch at 0 the model
computes in float; with one switch at 1 exactly that node sees quantized inputs and weights, with the model's own
scales and zero points: the plain "only this node in INT8" model, fake-quantized. One run per node over a few
samples gives its relative output error (:func:`node_noise`); the float-set search orders by time saved per share
of the summed squared error, since independent quantization noises add in power.

Fake quantization is onnxruntime's float arithmetic on dequantized values, not a runtime's INT8 kernels; it ranks
nodes, and each candidate float set is still judged by a device evaluation on the target runtime.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper

from edgeopt.evaluation import retention
from edgeopt.sweep.int8.host_eval import BATCH, HostEval
from edgeopt.sweep.int8.qdq_surgery import QDQ_OPS

SWITCH = "edgeopt_node_switch"
PROBE_SAMPLES = 2  # samples per node: the error is dense over the output, two samples rank nodes stably


def switch_model(qdq: onnx.ModelProto, base: onnx.ModelProto, nodes: Sequence[str]) -> onnx.ModelProto:
    """``qdq`` with one float switch per node of ``nodes`` (graph input :data:`SWITCH`, shape ``[len(nodes)]``).

    Inputs read through a ``DequantizeLinear`` whose float source cannot be traced (no ``QuantizeLinear`` before
    it and no float initializer of the same node in ``base``) stay quantized under every switch.
    """
    return _Switches(qdq, base, nodes).build()


class _Switches:
    """Builds :func:`switch_model`: one pass over the nodes, the mixes inserted before their readers."""

    def __init__(self, qdq: onnx.ModelProto, base: onnx.ModelProto, nodes: Sequence[str]) -> None:
        self.model = onnx.ModelProto()
        self.model.CopyFrom(qdq)
        g = self.g = self.model.graph
        self.index = {name: k for k, name in enumerate(nodes)}
        self.dq_of = {n.output[0]: n for n in g.node if n.op_type == "DequantizeLinear"}
        self.q_of = {n.output[0]: n for n in g.node if n.op_type == "QuantizeLinear"}
        self.producer = {o: n.name for n in g.node for o in n.output}
        self.base_nodes = {n.name: n for n in base.graph.node if n.name}
        self.base_inits = {t.name: t for t in base.graph.initializer}
        self.taken = {i.name for i in g.input} | {t.name for t in g.initializer} | set(self.producer)
        self.owners = self._owners()
        self.floats: dict[str, str] = {}
        self.switches: dict[int, str] = {}
        self.combined: dict[tuple[int, ...], str] = {}
        self.added: list[onnx.NodeProto] = []

    def _owners(self) -> dict[str, tuple[int, ...]]:
        """Per float activation behind a Q/DQ pair: the switches that quantize it. As in onnxruntime (and
        :func:`.qdq_surgery.keep_float`), a tensor stays quantized for every consumer while any node that writes it
        or reads its ``DequantizeLinear`` output is quantized."""
        owners: dict[str, set[int]] = {}
        for node in self.g.node:
            for cur in node.input:
                q = self.q_of.get(self.dq_of[cur].input[0]) if cur in self.dq_of else None
                if q is None:
                    continue
                act = q.input[0]
                mine = owners.setdefault(act, set())
                for name in (node.name, self.producer.get(act)):
                    if name is not None and name in self.index:
                        mine.add(self.index[name])
        return {act: tuple(sorted(ks)) for act, ks in owners.items() if ks}

    def fresh(self, stem: str) -> str:
        name, k = stem, 0
        while name in self.taken:
            k += 1
            name = f"{stem}_{k}"
        self.taken.add(name)
        return name

    def float_init(self, name: str) -> str:
        if name not in self.floats:
            t = TensorProto()
            t.CopyFrom(self.base_inits[name])
            t.name = self.floats[name] = self.fresh(f"{name}_probe_float")
            self.g.initializer.append(t)
        return self.floats[name]

    def switch(self, k: int) -> str:
        if k not in self.switches:
            idx = self.fresh(f"{SWITCH}_{k}_index")
            self.g.initializer.append(helper.make_tensor(idx, TensorProto.INT64, [], [k]))
            out = self.switches[k] = self.fresh(f"{SWITCH}_{k}")
            self.added.append(helper.make_node("Gather", [SWITCH, idx], [out], name=self.fresh(f"{out}_gather")))
        return self.switches[k]

    def source(self, reader: onnx.NodeProto | None, j: int, dq_out: str) -> tuple[str | None, tuple[int, ...] | None]:
        """The float tensor ``dq_out`` stands for and the switch owning it (None: no switch, read it in float)."""
        q = self.q_of.get(self.dq_of[dq_out].input[0])
        if q is not None:
            act = q.input[0]
            return act, self.owners.get(act)
        if reader is None:
            return None, None
        ref = self.base_nodes.get(reader.name)
        if ref is None or ref.op_type != reader.op_type or j >= len(ref.input) or ref.input[j] not in self.base_inits:
            return None, None
        k = self.index.get(reader.name)
        return self.float_init(ref.input[j]), (k,) if k is not None else None

    def either(self, ks: tuple[int, ...]) -> str:
        """The switch that is on when any of ``ks`` is (their maximum): a tensor both written and read by quantized
        nodes is quantized when either one is, as :func:`.qdq_surgery.keep_float` does."""
        if len(ks) == 1:
            return self.switch(ks[0])
        if ks not in self.combined:
            out = self.combined[ks] = self.fresh(f"{SWITCH}_{'_'.join(map(str, ks))}")
            self.added.append(helper.make_node("Max", [self.switch(k) for k in ks], [out],
                                               name=self.fresh(f"{out}_max")))
        return self.combined[ks]

    def mixed(self, src: str, dq_out: str, k: tuple[int, ...] | None, name: str | None = None) -> str:
        """``src + s * (dq_out - src)``, ``s`` the switch of ``k`` (written to ``name`` when given); ``src`` itself
        without a switch."""
        if k is None:
            return src
        diff, scaled = self.fresh(f"{dq_out}_probe_diff"), self.fresh(f"{dq_out}_probe_scaled")
        mix = name or self.fresh(f"{dq_out}_probe_mix")
        self.added.extend([helper.make_node("Sub", [dq_out, src], [diff], name=self.fresh(f"{diff}_node")),
                           helper.make_node("Mul", [diff, self.either(k)], [scaled], name=self.fresh(f"{scaled}_node")),
                           helper.make_node("Add", [src, scaled], [mix], name=self.fresh(f"{mix}_node"))])
        return mix

    def output(self, name: str, order: list[onnx.NodeProto]) -> None:
        """A graph output produced by a ``DequantizeLinear``: the DQ writes a new name, the mix the output's."""
        renamed = self.fresh(f"{name}_probe_dq")
        self.dq_of[renamed] = dq = self.dq_of[name]
        dq.output[0] = renamed
        for node in order:
            for j, cur in enumerate(node.input):
                if cur == name:
                    node.input[j] = renamed
        src, k = self.source(None, 0, renamed)
        if src is None or k is None:
            self.added.append(helper.make_node("Identity", [src or renamed], [name],
                                               name=self.fresh(f"{name}_probe_identity")))
        else:
            self.mixed(src, renamed, k, name)

    def build(self) -> onnx.ModelProto:
        order: list[onnx.NodeProto] = []
        for node in list(self.g.node):
            if node.op_type not in QDQ_OPS:
                for j, cur in enumerate(node.input):
                    if cur in self.dq_of:
                        src, k = self.source(node, j, cur)
                        if src is not None:
                            node.input[j] = self.mixed(src, cur, k)
            order.extend(self.added)
            self.added.clear()
            order.append(node)
        for value in self.g.output:
            if value.name in self.dq_of:
                self.output(value.name, order)
                order.extend(self.added)
                self.added.clear()
        del self.g.node[:]
        self.g.node.extend(order)
        self.g.input.append(helper.make_tensor_value_info(SWITCH, TensorProto.FLOAT, [len(self.index)]))
        return self.model


def node_noise(host: HostEval, qdq: onnx.ModelProto, base: onnx.ModelProto, nodes: Sequence[str],
               samples: int = PROBE_SAMPLES) -> tuple[dict[str, tuple[float, float]], float]:
    """Per node of ``nodes``: ``(retention, relative L2 error)`` of ``host``'s selected output with only that node
    fake-quantized, on the first ``samples`` eval samples; and the float model's own error through the switch model
    (every switch at 0: ~0, a check that the switches leave the float graph intact)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3
    model = switch_model(qdq, base, nodes)
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    n = min(samples, host.count)
    step = BATCH if host.batched else 1

    def run(switch: np.ndarray) -> np.ndarray:
        chunks = [sess.run(names, {**{k: v[lo:min(n, lo + step)] for k, v in host.feeds.items()}, SWITCH: switch})
                  for lo in range(0, n, step)]
        return host.selection.pick([np.concatenate([c[i] for c in chunks]) for i in range(len(names))], names)

    ref = host.reference[:n].astype(np.float64)
    norm = float(np.linalg.norm(ref)) or 1.0
    labels = None if host.labels is None else host.labels[:n]
    off = np.zeros(len(nodes), dtype=np.float32)
    drift = float(np.linalg.norm(run(off).astype(np.float64) - ref)) / norm
    scores: dict[str, tuple[float, float]] = {}
    for k, name in enumerate(nodes):
        on = off.copy()
        on[k] = 1.0
        out = run(on)
        _, ret = retention(host.metric, host.reference[:n], out.astype(host.reference.dtype, copy=False), labels)
        scores[name] = (float(ret), float(np.linalg.norm(out.astype(np.float64) - ref)) / norm)
    return scores, drift


def noise_shares(scores: dict[str, tuple[float, float]]) -> dict[str, float]:
    """Each node's share of the summed squared relative error (noises add in power): the float-set search's
    sensitivity. All zero (no node changes the output): every node shares equally."""
    power = {n: rel * rel for n, (_, rel) in scores.items()}
    total = sum(power.values())
    if total <= 0.0:
        return {n: 1.0 / max(1, len(power)) for n in power}
    return {n: p / total for n, p in power.items()}
