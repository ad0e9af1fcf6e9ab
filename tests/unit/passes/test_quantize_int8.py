"""Static INT8: QDQ with per-channel S8 weights, target-aware defaults, calibration required."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from edgeopt.calib import DataSource
from edgeopt.enums import Arch
from edgeopt.passes.base import PassError
from edgeopt.passes.cleanup import CleanupConfig, CleanupPass
from edgeopt.passes.int8_target import QuantTypeName, int8_defaults
from edgeopt.passes.quantize_int8 import QuantizeInt8Config, QuantizeInt8Pass
from edgeopt.targets import CpuFacts, load_registry
from edgeopt.targets.cpuinfo import cpu_facts

from .builders import Recorder, artifact, context, op_types, paddle_style_model, run_model


def _facts(*flags: str) -> CpuFacts:
    return CpuFacts(arch=Arch.X86_64, model="test CPU", cores=2, physical_cores=2, flags=tuple(flags))


def test_defaults_follow_the_target_cpu() -> None:
    registry = load_registry()
    local = registry.get("local")
    assert int8_defaults(local, lambda: _facts("avx2")).reduce_range is True
    assert int8_defaults(local, lambda: _facts("avx2", "avx512_vnni")).reduce_range is False
    arm = int8_defaults(registry.get("rpi5"))
    assert arm.reduce_range is False and arm.activation_type is QuantTypeName.U8
    trt = int8_defaults(registry.get("jetson-orin-nano"))
    assert trt.activation_type is QuantTypeName.S8 and trt.activation_symmetric is True
    assert int8_defaults(registry.get("intel-nuc")).reduce_range is True


def test_for_target_fills_only_automatic_options() -> None:
    rpi5 = load_registry().get("rpi5")
    resolved = QuantizeInt8Pass(QuantizeInt8Config()).for_target(rpi5).config
    assert resolved.reduce_range is False and resolved.activation_type is QuantTypeName.U8
    forced = QuantizeInt8Pass(QuantizeInt8Config(reduce_range=True)).for_target(rpi5).config
    assert forced.reduce_range is True


def _calib(tmp_path: Path, n: int = 16) -> DataSource:
    data = tmp_path / "calib.npz"
    np.savez(data, x=np.random.default_rng(0).standard_normal((n, 1, 3, 16, 16)).astype(np.float32))
    return DataSource(data)


def _clean(tmp_path: Path) -> Path:
    src = paddle_style_model(tmp_path / "paddle.onnx", opset=11)
    return CleanupPass(CleanupConfig(min_opset=17)).run(artifact(src), context(tmp_path, "clean.onnx")).path


def test_quantizes_weight_ops_per_channel_with_signed_weights(tmp_path: Path) -> None:
    clean = _clean(tmp_path)
    rec = Recorder()
    out = QuantizeInt8Pass(QuantizeInt8Config()).run(
        artifact(clean), context(tmp_path, "q.onnx", calibration=_calib(tmp_path), reporter=rec))
    ops = op_types(out.path)
    assert ops.count("QuantizeLinear") >= 2 and ops.count("DequantizeLinear") >= 3
    model = onnx.load(str(out.path))
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    weight_dq = [n for n in model.graph.node if n.op_type == "DequantizeLinear" and inits.get(n.input[0]) is not None
                 and inits[n.input[0]].ndim == 4]
    assert weight_dq, "the conv weight should be stored quantized"
    w = inits[weight_dq[0].input[0]]
    assert w.dtype == np.int8 and inits[weight_dq[0].input[1]].shape == (8,)  # one scale per output channel
    if cpu_facts().has_vnni:  # the local target: full 8-bit weights where VNNI cannot saturate
        assert int(np.abs(w).max()) == 127
    else:  # reduce_range on a non-VNNI x86: 7-bit weights
        assert int(np.abs(w).max()) <= 64
    assert rec.progress_events[-1] == ("calibrating INT8 ranges", 16, 16)
    x = np.random.default_rng(1).standard_normal((1, 3, 16, 16)).astype(np.float32)
    ref, got = run_model(clean, {"x": x})[0], run_model(out.path, {"x": x})[0]
    cos = float((ref.ravel() @ got.ravel()) / (np.linalg.norm(ref) * np.linalg.norm(got)))
    assert cos > 0.98


def test_nodes_to_exclude_stay_float(tmp_path: Path) -> None:
    clean = _clean(tmp_path)
    cfg = QuantizeInt8Config(nodes_to_exclude=["fc"], reduce_range=False)
    out = QuantizeInt8Pass(cfg).run(artifact(clean), context(tmp_path, "q.onnx", calibration=_calib(tmp_path)))
    model = onnx.load(str(out.path))
    fc = next(n for n in model.graph.node if n.name == "fc")
    assert fc.op_type == "MatMul" and not any("quantized" in i or "_DequantizeLinear" in i for i in fc.input[1:])


def test_old_opset_and_missing_calibration_are_clear_errors(tmp_path: Path) -> None:
    src = paddle_style_model(tmp_path / "paddle.onnx", opset=11)
    with pytest.raises(PassError, match="opset 11 .*min_opset: 17"):
        QuantizeInt8Pass(QuantizeInt8Config()).run(artifact(src), context(tmp_path, calibration=_calib(tmp_path)))
    with pytest.raises(PassError, match="needs calibration data"):
        QuantizeInt8Pass(QuantizeInt8Config()).run(artifact(_clean(tmp_path)), context(tmp_path, "q.onnx"))
