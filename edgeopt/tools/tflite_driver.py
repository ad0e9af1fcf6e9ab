"""Runs INSIDE the isolated tflite tool venv (never imported by edgeopt): ONNX -> TFLite with onnx2tf.

Request (JSON on stdin): onnx (path), work_dir, quantization (fp32 | fp16 | dynamic_int8 | full_int8),
calib ({input name: .npy path, NHWC for 4-D inputs}), io_dtype (float32 | int8 | uint8), keep_nchw (input names
kept NCHW). Reply (last stdout line): {"ok": true, "tflite": path, "versions": {...}} or {"ok": false, "error"}.
onnx2tf downloads sample calibration images when integer quantization runs without custom data: this driver
always passes the caller's data and disables that download.
"""

import json
import shutil
import sys
import traceback
from pathlib import Path

SUFFIX = {
    "fp32": "_float32.tflite",
    "fp16": "_float16.tflite",
    "dynamic_int8": "_dynamic_range_quant.tflite",
    "full_int8": "_full_integer_quant.tflite",
}


def _no_download(*args, **kwargs):
    raise RuntimeError("edgeopt: sample-image download disabled; calibration data must come from --calib")


def main():
    req = json.loads(sys.stdin.read())
    work = Path(req["work_dir"])
    work.mkdir(parents=True, exist_ok=True)
    src = work / "model.onnx"
    shutil.copyfile(req["onnx"], src)  # onnx2tf may rewrite its input: convert a copy
    import onnx2tf
    from onnx2tf.utils import common_functions

    if hasattr(common_functions, "download_test_image_data"):
        common_functions.download_test_image_data = _no_download
    import onnx2tf.onnx2tf as core

    if hasattr(core, "download_test_image_data"):
        core.download_test_image_data = _no_download
    quant = req["quantization"]
    integer = quant in ("dynamic_int8", "full_int8")
    calib = [[name, path, 0.0, 1.0] for name, path in (req.get("calib") or {}).items()]
    if quant == "full_int8" and not calib:
        raise ValueError("full_int8 needs calibration data")
    out_dir = work / "tf"
    kwargs = dict(
        input_onnx_file_path=str(src),
        output_folder_path=str(out_dir),
        non_verbose=True,
        output_integer_quantized_tflite=integer,
        keep_ncw_or_nchw_or_ncdhw_input_names=req.get("keep_nchw") or None,
    )
    if integer:
        kwargs.update(
            quant_type="per-channel",
            custom_input_op_name_np_data_path=calib or None,
            input_quant_dtype=req.get("io_dtype", "int8") if req.get("io_dtype") != "float32" else "int8",
            output_quant_dtype=req.get("io_dtype", "int8") if req.get("io_dtype") != "float32" else "int8",
        )
    onnx2tf.convert(**kwargs)
    suffix = "_integer_quant.tflite" if quant == "full_int8" and req.get("io_dtype") == "float32" else SUFFIX[quant]
    found = out_dir / ("model" + suffix)  # _integer_quant: INT8 inside, float32 I/O
    if not found.exists():
        raise FileNotFoundError(f"onnx2tf wrote no {found.name} ({sorted(p.name for p in out_dir.glob('*.tflite'))})")
    import tensorflow as tf

    print(json.dumps({"ok": True, "tflite": str(found),
                      "versions": {"onnx2tf": onnx2tf.__version__, "tensorflow": tf.__version__}}))


if __name__ == "__main__":
    try:
        main()
    except Exception as exc:  # the reply carries the error; the host turns it into a PassError
        traceback.print_exc(file=sys.stderr)
        print(json.dumps({"ok": False, "error": f"{type(exc).__name__}: {' '.join(str(exc).split())[:400]}"}))
        sys.exit(1)
