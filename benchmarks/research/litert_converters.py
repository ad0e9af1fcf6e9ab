"""LiteRT converters benchmark: litert-torch (torch -> TFLite directly) vs edgeopt's ONNX -> onnx2tf -> TFLite path.

For PyTorch inputs there are two ways to a .tflite file. This script builds the same seeded PyTorch models for both
and measures, per model and precision (fp32, dynamic-range int8, full int8):

- conversion wall time: the converter subprocess end to end (interpreter start, imports, conversion, write);
  "total" adds, for the ONNX path, its torch.onnx.export subprocess (dynamo, opset 18, as edgeopt's export pass
  does); the JSON also has litert-torch's in-process time (PT2E + ``litert_torch.convert``);
- file size of the .tflite;
- fidelity vs the PyTorch fp32 output on 16 seeded random inputs: max abs error, minimum cosine, top-1 agreement;
- median latency of ``invoke()`` over 200 runs (after 20 warm-up runs), single-threaded (num_threads=1), every
  file on the same interpreter (``ai_edge_litert.interpreter.Interpreter`` of the litert-torch environment).

onnx2tf writes NHWC inputs for 4-D inputs: its files get transposed inputs. Int8 inputs/outputs are (de)quantized
with the tensor's own scale and zero point. Quantization: litert-torch through PT2E (``PT2EQuantizer``, symmetric
per-channel; dynamic for dynamic-range, static for full int8, calibrated on 32 seeded random inputs); onnx2tf
through edgeopt's driver (per-channel, the same 32 calibration inputs, int8 I/O for full int8).

Models: ``small_cnn`` (the SmallCNN of tests/unit/passes/torch/models.py, input [1, 1, 8, 8]) and
``mobilenet_like`` (a stem conv and 6 depthwise-separable blocks, MobileNet-v1 style, input [1, 3, 96, 96]); random
weights (seed 0) with randomized BatchNorm statistics, so BN folding is exercised; nothing is downloaded.

Three Python environments, each run as a subprocess of this script (which re-runs itself with ``--stage``):
- ``--litert-python``: litert-torch 0.10 + torch (CPU) + ai-edge-litert: builds the models, converts, evaluates;
- ``--export-python``: torch + onnx + onnxscript (default: this interpreter, e.g. edgeopt's .venv): ONNX export;
- ``--tools-python``: edgeopt's isolated tflite tool venv (onnx2tf, tensorflow), running edgeopt/tools/tflite_driver.py.

Usage: python -m benchmarks.research.litert_converters --litert-python /tmp/litert-torch-env/bin/python
       --tools-python /tmp/eo-tools/tflite/bin/python [--export-python PY] [--models small_cnn,mobilenet_like]
       [--runs 200] [--work-dir DIR] [--out benchmarks/results/litert_converters.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import REPO, RESULTS, write_json

DRIVER = REPO / "edgeopt" / "tools" / "tflite_driver.py"
MODELS: dict[str, tuple[int, ...]] = {"small_cnn": (1, 1, 8, 8), "mobilenet_like": (1, 3, 96, 96)}
PRECISIONS = ("fp32", "dynamic_int8", "full_int8")
EVAL_SAMPLES = 16
CALIB_SAMPLES = 32
WARMUP = 20
INPUT_NAME = "input"
QUIET_ENV = {"TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONWARNINGS": "ignore", "CUDA_VISIBLE_DEVICES": ""}


# ---------------------------------------------------------------------------------------------------------------
# Stages run inside the other environments (torch / numpy are imported there, never by the orchestrator).


def _build(name: str) -> Any:
    """The seeded model, in eval mode, with randomized BatchNorm statistics."""
    import torch
    from torch import nn

    from tests.unit.passes.torch.models import SmallCNN  # needs only torch: any of the environments imports it

    def conv_bn(cin: int, cout: int, k: int, stride: int, groups: int = 1) -> list[nn.Module]:
        return [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout), nn.ReLU6()]

    class MobileNetLike(nn.Module):
        """MobileNet-v1 style: 3x3 stem (stride 2), depthwise-separable blocks, global pool, Linear."""

        def __init__(self, classes: int = 100) -> None:
            super().__init__()
            layers = conv_bn(3, 32, 3, 2)
            for cin, cout, stride in ((32, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1),
                                      (256, 512, 2)):
                layers += conv_bn(cin, cin, 3, stride, groups=cin) + conv_bn(cin, cout, 1, 1)
            self.features = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())
            self.classifier = nn.Linear(512, classes)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.classifier(self.features(x))

    torch.manual_seed(0)
    model = SmallCNN() if name == "small_cnn" else MobileNetLike()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.normal_(0.0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0.0, 0.1)
    return model.eval()


def _stage_prepare(work: Path, name: str) -> dict[str, Any]:
    """Seeded evaluation and calibration inputs (NCHW and NHWC) and the PyTorch reference outputs."""
    import numpy as np
    import torch

    shape = MODELS[name]
    model = _build(name)
    rng = np.random.default_rng(1)
    inputs = rng.standard_normal((EVAL_SAMPLES, *shape), dtype=np.float32)
    calib = np.random.default_rng(2).standard_normal((CALIB_SAMPLES, *shape[1:]), dtype=np.float32)
    with torch.no_grad():
        ref = np.stack([model(torch.from_numpy(x)).numpy() for x in inputs])
    np.save(work / "inputs.npy", inputs)
    np.save(work / "ref.npy", ref)
    np.save(work / "calib_nchw.npy", calib)
    np.save(work / "calib_nhwc.npy", np.ascontiguousarray(calib.transpose(0, 2, 3, 1)))
    return {"params": sum(p.numel() for p in model.parameters())}


def _stage_litert(work: Path, name: str, precision: str) -> dict[str, Any]:
    """litert_torch.convert (PT2E-quantized module for the int8 precisions) and export to a .tflite file."""
    import litert_torch
    import numpy as np
    import torch

    model = _build(name)
    args = (torch.from_numpy(np.load(work / "inputs.npy")[0]),)
    start = time.perf_counter()
    quant_config = None
    if precision != "fp32":
        from litert_torch.quantize import pt2e_quantizer
        from litert_torch.quantize import quant_config as qcfg
        from torchao.quantization.pt2e import quantize_pt2e

        quantizer = pt2e_quantizer.PT2EQuantizer().set_global(
            pt2e_quantizer.get_symmetric_quantization_config(is_per_channel=True,
                                                             is_dynamic=precision == "dynamic_int8"))
        prepared = quantize_pt2e.prepare_pt2e(torch.export.export(model, args).module(), quantizer)
        with torch.no_grad():
            for x in np.load(work / "calib_nchw.npy"):
                prepared(torch.from_numpy(x[None]))
        model = quantize_pt2e.convert_pt2e(prepared, fold_quantize=False)
        quant_config = qcfg.QuantConfig(pt2e_quantizer=quantizer)
    edge = litert_torch.convert(model, args, quant_config=quant_config)
    path = work / f"litert_{precision}.tflite"
    edge.export(str(path))
    import ai_edge_litert

    return {"tflite": str(path), "convert_s": time.perf_counter() - start,
            "versions": {"litert-torch": litert_torch.__version__, "torch": torch.__version__,
                         "ai-edge-litert": getattr(ai_edge_litert, "__version__", "?")}}


def _stage_export(work: Path, name: str) -> dict[str, Any]:
    """torch.onnx.export as edgeopt's export pass does it (dynamo, opset 18, onnxscript optimizer)."""
    import numpy as np
    import onnx
    import torch

    model = _build(name)
    args = (torch.from_numpy(np.load(work / "inputs.npy")[0]),)
    start = time.perf_counter()
    program = torch.onnx.export(model, args, input_names=[INPUT_NAME], dynamo=True, opset_version=18,
                                optimize=True, verbose=False)
    path = work / "model.onnx"
    onnx.save_model(program.model_proto, str(path))
    return {"onnx": str(path), "export_s": time.perf_counter() - start,
            "versions": {"torch": torch.__version__, "onnx": onnx.__version__}}


def _to_model_input(x: Any, detail: dict[str, Any]) -> Any:
    """NCHW float sample -> what the file takes: NHWC if its shape says so, int8/uint8 through its quantization."""
    import numpy as np

    want = tuple(int(d) for d in detail["shape"])
    if x.shape != want and x.ndim == 4 and x.transpose(0, 2, 3, 1).shape == want:
        x = x.transpose(0, 2, 3, 1)
    if detail["dtype"] in (np.int8, np.uint8):
        scale, zero = detail["quantization"]
        info = np.iinfo(detail["dtype"])
        x = np.clip(np.round(x / scale + zero), info.min, info.max)
    return np.ascontiguousarray(x.astype(detail["dtype"]))


def _from_model_output(y: Any, detail: dict[str, Any]) -> Any:
    import numpy as np

    if detail["dtype"] in (np.int8, np.uint8):
        scale, zero = detail["quantization"]
        return (y.astype(np.float32) - zero) * scale
    return y.astype(np.float32)


def _stage_evaluate(work: Path, tflite: str, runs: int) -> dict[str, Any]:
    """Fidelity vs the PyTorch outputs and single-threaded invoke() latency on the LiteRT interpreter."""
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter

    interp = Interpreter(model_path=tflite, num_threads=1)
    interp.allocate_tensors()
    (inp,) = interp.get_input_details()
    out = interp.get_output_details()[0]
    inputs, ref = np.load(work / "inputs.npy"), np.load(work / "ref.npy")
    got = []
    for x in inputs:
        interp.set_tensor(inp["index"], _to_model_input(x, inp))
        interp.invoke()
        got.append(_from_model_output(interp.get_tensor(out["index"]), out).reshape(ref.shape[1:]))
    pred = np.stack(got).reshape(len(ref), -1).astype(np.float64)
    want = ref.reshape(len(ref), -1).astype(np.float64)
    cos = (pred * want).sum(1) / (np.linalg.norm(pred, axis=1) * np.linalg.norm(want, axis=1) + 1e-12)
    interp.set_tensor(inp["index"], _to_model_input(inputs[0], inp))
    times = []
    for i in range(WARMUP + runs):
        start = time.perf_counter()
        interp.invoke()
        if i >= WARMUP:
            times.append(time.perf_counter() - start)
    return {"max_abs_err": float(np.abs(pred - want).max()), "ref_abs_max": float(np.abs(want).max()),
            "cosine_min": float(cos.min()), "top1_agree": float((pred.argmax(1) == want.argmax(1)).mean()),
            "latency_ms_median": float(np.median(times) * 1e3), "latency_ms_p90": float(np.percentile(times, 90) * 1e3),
            "input": f"{np.dtype(inp['dtype']).name}{list(int(d) for d in inp['shape'])}",
            "output_dtype": np.dtype(out["dtype"]).name}


# ---------------------------------------------------------------------------------------------------------------
# Orchestrator (plain Python: runs the stages and the onnx2tf driver as subprocesses).


def _run(cmd: list[str], stdin: str | None = None, timeout: float = 900) -> tuple[dict[str, Any], float]:
    """Runs a subprocess whose last stdout line is a JSON reply; returns it and the wall time."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **QUIET_ENV}, cwd=REPO)
    wall = time.perf_counter() - start
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    try:
        reply = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        reply = {"ok": False, "error": f"exit {proc.returncode}: {' | '.join(tail)[:600]}"}
    if proc.returncode != 0 and reply.get("ok", True):
        reply = {"ok": False, "error": f"exit {proc.returncode}"}
    return reply, wall


def _stage(python: str, *args: str) -> tuple[dict[str, Any], float]:
    """Run a stage of this module in another environment (as a module from the checkout's root: ``cwd=REPO``)."""
    return _run([python, "-m", "benchmarks.research.litert_converters", "--stage", *args])


def _bench_model(name: str, work: Path, ns: argparse.Namespace) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    prep, _ = _stage(ns.litert_python, "prepare", str(work), name)
    if not prep.get("ok"):
        return {"error": f"prepare: {prep.get('error')}"}
    result: dict[str, Any] = {"input_shape": list(MODELS[name]), "params": prep["params"], "rows": []}
    export, export_wall = _stage(ns.export_python, "export", str(work), name)
    result["onnx_export"] = {**export, "wall_s": export_wall}
    for precision in PRECISIONS:
        for converter in ("litert-torch", "onnx2tf"):
            row: dict[str, Any] = {"model": name, "converter": converter, "precision": precision}
            if converter == "litert-torch":
                reply, wall = _stage(ns.litert_python, "litert", str(work), name, precision)
            elif not export.get("ok"):
                reply, wall = {"ok": False, "error": f"onnx export: {export.get('error')}"}, 0.0
            else:
                request = {"onnx": export["onnx"], "work_dir": str(work / f"onnx2tf_{precision}"),
                           "quantization": precision, "io_dtype": "int8" if precision == "full_int8" else "float32",
                           "calib": {INPUT_NAME: str(work / "calib_nhwc.npy")} if precision != "fp32" else {}}
                reply, wall = _run([ns.tools_python, str(DRIVER)], stdin=json.dumps(request))
            row["convert_wall_s"] = round(wall, 2)
            row["pipeline_wall_s"] = round(wall + (export_wall if converter == "onnx2tf" else 0.0), 2)
            if not reply.get("ok"):
                row["error"] = reply.get("error")
                result["rows"].append(row)
                print(f"  {name:15s} {converter:12s} {precision:13s} FAILED: {row['error']}", flush=True)
                continue
            row["convert_inproc_s"] = round(reply["convert_s"], 2) if "convert_s" in reply else None
            row["versions"] = reply.get("versions", {})
            row["size_kb"] = round(Path(reply["tflite"]).stat().st_size / 1024, 1)
            metrics, _ = _stage(ns.litert_python, "evaluate", str(work), reply["tflite"], str(ns.runs))
            if metrics.pop("ok", False):
                row.update(metrics)
            else:
                row["error"] = f"evaluate: {metrics.get('error')}"
            result["rows"].append(row)
            print(f"  {name:15s} {converter:12s} {precision:13s} done ({wall:.1f} s)", flush=True)
    return result


def _table(rows: list[dict[str, Any]]) -> str:
    head = (f"{'model':15s} {'converter':12s} {'precision':13s} {'conv s':>7s} {'total s':>7s} {'KB':>8s} "
            f"{'max|err|':>9s} {'cos min':>8s} {'top1':>5s} {'ms p50':>7s}  input")
    lines = [head, "-" * len(head)]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['model']:15s} {r['converter']:12s} {r['precision']:13s} FAILED: {r['error'][:80]}")
            continue
        lines.append(f"{r['model']:15s} {r['converter']:12s} {r['precision']:13s} {r['convert_wall_s']:7.1f} "
                     f"{r['pipeline_wall_s']:7.1f} {r['size_kb']:8.1f} {r['max_abs_err']:9.2e} "
                     f"{r['cosine_min']:8.5f} {r['top1_agree']:5.2f} {r['latency_ms_median']:7.3f}  {r['input']}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stage", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--litert-python", default="/tmp/litert-torch-env/bin/python")
    ap.add_argument("--tools-python", default="/tmp/eo-tools/tflite/bin/python")
    ap.add_argument("--export-python", default=sys.executable, help="torch + onnx + onnxscript (default: this one)")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--work-dir", type=Path, default=None, help="keep the files here (default: a temp dir)")
    ap.add_argument("--out", type=Path, default=RESULTS / "litert_converters.json")
    ns = ap.parse_args()
    if ns.stage:
        return _stage_main(ns.stage)
    with tempfile.TemporaryDirectory(prefix="litert-bench-") as tmp:
        root = ns.work_dir or Path(tmp)
        models = {}
        for name in ns.models.split(","):
            print(f"{name}:", flush=True)
            models[name] = _bench_model(name, root / name, ns)
    rows = [r for m in models.values() for r in m.get("rows", [])]
    print(_table(rows))
    doc = {"benchmark": "litert_converters", "date": time.strftime("%Y-%m-%d"),
           "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform(),
                       "python": platform.python_version()},
           "settings": {"eval_samples": EVAL_SAMPLES, "calib_samples": CALIB_SAMPLES, "runs": ns.runs,
                        "warmup": WARMUP, "num_threads": 1},
           "models": models}
    write_json(ns.out, doc)
    print(f"wrote {ns.out}")
    return 0


def _stage_main(args: list[str]) -> int:
    stage, work = args[0], Path(args[1])
    try:
        if stage == "prepare":
            reply = _stage_prepare(work, args[2])
        elif stage == "litert":
            reply = _stage_litert(work, args[2], args[3])
        elif stage == "export":
            reply = _stage_export(work, args[2])
        elif stage == "evaluate":
            reply = _stage_evaluate(work, args[2], int(args[3]))
        else:
            raise ValueError(f"unknown stage {stage}")
    except Exception as exc:  # the reply carries the error to the orchestrator
        import traceback

        traceback.print_exc(file=sys.stderr)
        print(json.dumps({"ok": False, "error": f"{type(exc).__name__}: {' '.join(str(exc).split())[:400]}"}))
        return 1
    print(json.dumps({"ok": True, **reply}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
