"""Runs INSIDE the isolated tflite tool venv (never imported by edgeopt): ONNX -> TFLite with onnx2tf.

Request (JSON on stdin): onnx (path), work_dir, quantization (fp32 | fp16 | dynamic_int8 | full_int8),
calib ({input name: .npy path, NHWC for 4-D inputs}), io_dtype (float32 | int8 | uint8), keep_nchw (input names
kept NCHW). Reply (last stdout line): {"ok": true, "tflite": path, "versions": {...}} or {"ok": false, "error"}.
onnx2tf downloads sample images (20 MS-COCO crops) in two places: as the representative dataset when integer
quantization runs without custom data, and as test data for its own ONNX-vs-TF output check whenever every input
is a 3-channel image. This driver passes the caller's data for the first and serves the caller's samples to the
second (its download function is replaced; seeded random images when the caller has no real samples): nothing
is ever downloaded.
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


def _sample_images(calib):
    """A stand-in for onnx2tf's ``download_test_image_data``: the caller's NHWC samples of a 3-channel input."""
    import numpy as np

    arrays = [np.load(path, allow_pickle=False) for path in calib.values()]
    images = [a for a in arrays if a.ndim == 4 and a.shape[-1] == 3]

    def provide(*args, **kwargs):
        if images:
            return images[0].astype(np.float32)
        # only onnx2tf's output check gets here (integer quantization always has the caller's data)
        return np.random.default_rng(0).random((20, 128, 128, 3), dtype=np.float32)

    return provide


def _tf_safe_node_names(path):
    """Rename nodes whose names TensorFlow refuses as scope names (Paddle exports write ``Softmax@0``)."""
    import re

    import onnx

    model = onnx.load(str(path))
    bad = re.compile(r"[^A-Za-z0-9_.\\/>-]")
    changed = False
    for i, node in enumerate(model.graph.node):
        if node.name and (bad.search(node.name) or not re.match(r"[A-Za-z0-9.]", node.name)):
            node.name = f"n{i}_{bad.sub('_', node.name)}"
            changed = True
    if changed:
        onnx.save(model, str(path))


def main():
    req = json.loads(sys.stdin.read())
    work = Path(req["work_dir"])
    work.mkdir(parents=True, exist_ok=True)
    src = work / "model.onnx"
    shutil.copyfile(req["onnx"], src)  # onnx2tf may rewrite its input: convert a copy
    _tf_safe_node_names(src)
    import onnx2tf
    from onnx2tf.utils import common_functions

    no_download = _sample_images(req.get("calib") or {})
    if hasattr(common_functions, "download_test_image_data"):
        common_functions.download_test_image_data = no_download
    import onnx2tf.onnx2tf as core

    if hasattr(core, "download_test_image_data"):
        core.download_test_image_data = no_download
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
