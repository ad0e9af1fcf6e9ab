"""Hostile ONNX models for the fuzz campaign: small valid models built here, and hypothesis strategies that break
them (bytes cut or flipped, wrong dtypes and shapes, cycles, missing inputs, huge dims, external data that points
out of the model's directory, symlinks, deeply nested ``If`` bodies)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

# Where a model refusing to stay in its directory would read from; created by the workspace, never changed.
SECRET = "secret/data.bin"


def chain_model() -> onnx.ModelProto:
    """y = relu(x @ W + b), x [1, 4] float32."""
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3) / 10, "W")
    b = numpy_helper.from_array(np.ones(3, np.float32), "b")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"), helper.make_node("Add", ["h", "b"], ["a"],
                                                                                     name="add"),
         helper.make_node("Relu", ["a"], ["y"], name="relu")],
        "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])], [w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def if_model(depth: int) -> onnx.ModelProto:
    """y = x + 1 through ``depth`` nested ``If`` nodes, all on the same boolean input ``c``."""
    def leaf(level: int) -> onnx.GraphProto:
        out = helper.make_tensor_value_info(f"o{level}", TensorProto.FLOAT, [1, 4])
        one = numpy_helper.from_array(np.ones((1, 4), np.float32), f"one{level}")
        return helper.make_graph([helper.make_node("Add", ["x", f"one{level}"], [f"o{level}"])], f"leaf{level}",
                                 [], [out], [one])

    def body(level: int) -> onnx.GraphProto:  # the then-branch nests, the else-branch is a leaf: linear size
        if level == depth:
            return leaf(level)
        out = helper.make_tensor_value_info(f"o{level}", TensorProto.FLOAT, [1, 4])
        node = helper.make_node("If", ["c"], [f"o{level}"], then_branch=body(level + 1), else_branch=leaf(level + 1))
        return helper.make_graph([node], f"level{level}", [], [out])

    top = helper.make_node("If", ["c"], ["y"], then_branch=body(1), else_branch=leaf(1))
    graph = helper.make_graph([top], "nested_if",
                              [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                               helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@dataclass
class ModelCase:
    """One hostile model: the files to write (relative to its own dir), symlinks, and what it is."""

    kind: str
    files: dict[str, bytes]
    links: dict[str, str] = field(default_factory=dict)  # link name -> target (relative to the model dir)
    must_refuse: bool = False  # reading outside the directory: the only acceptable outcome is exit 2

    def write(self, root: Path) -> Path:
        """Write into ``root/model`` (the secret lives in ``root/secret``); returns the model path."""
        (root / "secret").mkdir(exist_ok=True)
        (root / SECRET).write_bytes(b"\0" * 48)
        d = root / "model"
        d.mkdir()
        for name, data in self.files.items():
            (d / name).parent.mkdir(parents=True, exist_ok=True)
            (d / name).write_bytes(data)
        for name, target in self.links.items():
            os.symlink(target, d / name)
        return d / "model.onnx"


def _bytes(model: onnx.ModelProto) -> bytes:
    return model.SerializeToString()


def _with(mutate: Callable[[onnx.ModelProto], None], base: onnx.ModelProto | None = None) -> bytes:
    model = onnx.ModelProto()
    model.CopyFrom(base if base is not None else chain_model())
    mutate(model)
    return _bytes(model)


HUGE = st.sampled_from([0, -1, -(2**40), 2**31, 2**40, 2**62, 2**63 - 1])
DTYPES = st.integers(min_value=0, max_value=25)


@st.composite
def byte_damage(draw: st.DrawFn) -> ModelCase:
    base = _bytes(chain_model())
    how = draw(st.sampled_from(["truncate", "flip", "append", "prepend", "empty", "random"]))
    if how == "truncate":
        data = base[: draw(st.integers(0, len(base) - 1))]
    elif how == "flip":
        buf = bytearray(base)
        for _ in range(draw(st.integers(1, 8))):
            pos = draw(st.integers(0, len(buf) - 1))
            buf[pos] ^= 1 << draw(st.integers(0, 7))
        data = bytes(buf)
    elif how == "append":
        data = base + draw(st.binary(min_size=1, max_size=64))
    elif how == "prepend":
        data = draw(st.binary(min_size=1, max_size=16)) + base
    elif how == "empty":
        data = b""
    else:
        data = b"\x08" + bytes([draw(st.integers(1, 20))]) + draw(st.binary(max_size=200))
    return ModelCase(f"bytes:{how}", {"model.onnx": data})


@st.composite
def proto_damage(draw: st.DrawFn) -> ModelCase:
    """Well-formed protobuf, wrong model: dtypes, shapes, cycles, missing names, huge dims, bad opsets."""
    how = draw(st.sampled_from(["input_dtype", "init_dtype", "input_shape", "init_shape", "output_shape", "cycle",
                                "missing_input", "no_graph_input", "no_initializer", "huge_input", "huge_init",
                                "dim_param", "opset", "ir_version", "op_type", "duplicate_output", "no_nodes"]))
    dtype, huge = draw(DTYPES), draw(HUGE)
    dims = draw(st.lists(st.integers(-3, 9), max_size=5))
    text = draw(st.text(max_size=12))

    def mutate(m: onnx.ModelProto) -> None:
        g = m.graph
        if how == "input_dtype":
            g.input[0].type.tensor_type.elem_type = dtype
        elif how == "init_dtype":
            g.initializer[0].data_type = dtype
        elif how == "input_shape":
            shape = g.input[0].type.tensor_type.shape
            del shape.dim[:]
            for d in dims:
                shape.dim.add().dim_value = d
        elif how == "init_shape":
            del g.initializer[0].dims[:]
            g.initializer[0].dims.extend(dims)
        elif how == "output_shape":
            g.output[0].type.tensor_type.shape.dim[1].dim_value = dims[0] if dims else 7
        elif how == "cycle":
            g.node[0].input[0] = "y"  # mm reads relu's output: mm -> add -> relu -> mm
        elif how == "missing_input":
            g.node[draw(st.integers(0, 2))].input[0] = "ghost" + text
        elif how == "no_graph_input":
            del g.input[:]
        elif how == "no_initializer":
            del g.initializer[draw(st.integers(0, 1))]
        elif how == "huge_input":
            g.input[0].type.tensor_type.shape.dim[draw(st.integers(0, 1))].dim_value = huge
        elif how == "huge_init":
            g.initializer[0].dims[0] = huge
        elif how == "dim_param":
            g.input[0].type.tensor_type.shape.dim[draw(st.integers(0, 1))].dim_param = text or "N"
        elif how == "opset":
            m.opset_import[0].version = draw(st.sampled_from([0, 1, 6, 99, 10**6]))
            m.opset_import[0].domain = draw(st.sampled_from(["", "ai.onnx", "com.evil"]))
        elif how == "ir_version":
            m.ir_version = draw(st.sampled_from([0, 1, 3, 99, 2**40]))
        elif how == "op_type":
            g.node[draw(st.integers(0, 2))].op_type = text or "NoSuchOp"
        elif how == "duplicate_output":
            g.node[1].output[0] = "h"
        elif how == "no_nodes":
            del g.node[:]

    return ModelCase(f"proto:{how}", {"model.onnx": _with(mutate)})


@st.composite
def external_data(draw: st.DrawFn) -> ModelCase:
    """W stored in a data file, the reference fuzzed: absolute paths, ``..``, symlinks out, bad byte ranges."""
    location = draw(st.sampled_from(["w.bin", "/etc/hostname", "../" + SECRET, "../../../../etc/hostname",
                                     "sub/../../" + SECRET, "link.bin", "linkdir/data.bin", "C:\\w.bin",
                                     "missing.bin", "", "sub/w.bin", "./w.bin", "w.bin\0../x"]))
    offset = draw(st.sampled_from([None, "0", "-1", "abc", "16", "99999999", "1e3"]))
    length = draw(st.sampled_from([None, "48", "0", "-5", "4096", "x"]))
    model = chain_model()
    w = model.graph.initializer[0]
    raw = w.raw_data or np.asarray(numpy_helper.to_array(w)).tobytes()
    w.ClearField("raw_data")
    del w.float_data[:]
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            entry = w.external_data.add()
            entry.key, entry.value = key, value
    files = {"model.onnx": _bytes(model), "w.bin": raw, "sub/w.bin": raw}
    links = {"link.bin": "../" + SECRET, "linkdir": "../secret"}
    outside = location.startswith(("/", "..", "C:")) or "../" in location or location.startswith("link")
    return ModelCase(f"external:{location or 'empty'}", files, links, must_refuse=outside)


@st.composite
def nested_if(draw: st.DrawFn) -> ModelCase:
    depth = draw(st.integers(1, 30))  # upb refuses protobuf nested deeper than 100
    how = draw(st.sampled_from(["valid", "missing_outer_name", "branch_outputs", "cond_float"]))

    def mutate(m: onnx.ModelProto) -> None:
        node = m.graph.node[0]
        inner = node.attribute[0].g
        for _ in range(draw(st.integers(0, depth - 1))):
            if inner.node[0].op_type != "If":
                break
            inner = inner.node[0].attribute[0].g
        if how == "missing_outer_name":
            inner.node[0].input[0] = "nowhere"
        elif how == "branch_outputs":
            inner.output.add().CopyFrom(inner.output[0])
        elif how == "cond_float":
            m.graph.input[0].type.tensor_type.elem_type = TensorProto.FLOAT

    return ModelCase(f"if:{how}", {"model.onnx": _with(mutate, if_model(depth))})


def valid_model() -> ModelCase:
    return ModelCase("valid", {"model.onnx": _bytes(chain_model())})


def hostile_models() -> st.SearchStrategy[ModelCase]:
    return st.one_of(byte_damage(), proto_damage(), external_data(), nested_if(), st.just(valid_model()))
