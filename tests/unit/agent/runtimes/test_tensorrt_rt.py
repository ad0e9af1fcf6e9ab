"""The TensorRT runtime's parts that run without a GPU: the missing-package message, the engine cache key and
the reading of the engine inspector's per-layer JSON. Building and running engines needs TensorRT and an NVIDIA
GPU: the contract test covers that wherever ``tensorrt`` is importable.
"""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

from edgeopt_agent import runtimes
from edgeopt_agent.runtimes.tensorrt_engine import engine_cache_path, layer_precision, summarize_layers


@pytest.mark.skipif(importlib.util.find_spec("tensorrt") is not None, reason="tensorrt is installed here")
def test_missing_tensorrt_names_what_to_install():
    with pytest.raises(runtimes.RuntimeMissing) as err:
        runtimes.create("tensorrt")
    message = str(err.value)
    assert "python3-libnvinfer" in message and "pip install tensorrt" in message and "cuda-python" in message


def test_cache_path_is_keyed_by_hash_precision_batch_and_version(tmp_path):
    model = str(tmp_path / "net.onnx")
    base = engine_cache_path(model, "ab" * 32, "fp16", 1, "10.3.0")
    assert base == os.path.join(str(tmp_path), "net." + "ab" * 8 + ".fp16.b1.trt10.3.0.engine")
    variants = {
        engine_cache_path(model, "cd" * 32, "fp16", 1, "10.3.0"),
        engine_cache_path(model, "ab" * 32, "int8", 1, "10.3.0"),
        engine_cache_path(model, "ab" * 32, "fp16", 4, "10.3.0"),
        engine_cache_path(model, "ab" * 32, "fp16", 1, "8.6.2"),
        engine_cache_path(model, "ab" * 32, "fp16", 1, "10.3.0", dla_core=0),
    }
    assert base not in variants and len(variants) == 5
    elsewhere = engine_cache_path(model, "ab" * 32, "fp16", 1, "10.3.0", cache_dir="/var/cache/x")
    assert elsewhere.startswith("/var/cache/x/")


@pytest.mark.parametrize("text,precision", [
    ("Row major linear FP32", "fp32"),
    ("Float", "fp32"),  # TensorRT 10.9+ short names
    ("Half", "fp16"),
    ("Channel major FP16 format where channel % 8 == 0", "fp16"),
    ("Thirty-two wide channel vectorized row major Int8 format.", "int8"),
    ("Row major linear Int32", "int32"),
    ("N/A due to dynamic shapes", "unknown"),
])
def test_layer_precision_reads_inspector_format_strings(text, precision):
    assert layer_precision(text) == precision


def test_summarize_layers_counts_precisions_from_detailed_json():
    info = json.loads("""{"Layers": [
      {"Name": "conv1 + relu", "LayerType": "CaskConvolution",
       "Inputs": [{"Name": "x", "Format/Datatype": "Row major linear FP32"}],
       "Outputs": [{"Name": "a", "Format/Datatype": "Channel major FP16 format where channel % 8 == 0"}]},
      {"Name": "conv2", "LayerType": "CaskConvolution",
       "Inputs": [{"Name": "a", "Format/Datatype": "Thirty-two wide channel vectorized row major Int8 format."}],
       "Outputs": [{"Name": "b", "Format/Datatype": "Thirty-two wide channel vectorized row major Int8 format."}]},
      {"Name": "fc", "LayerType": "Gemm", "Inputs": [], "Outputs": [{"Name": "y", "Format/Datatype": "Float"}]}
    ], "Bindings": ["x", "y"]}""")
    summary = summarize_layers(info)
    assert summary["available"] and summary["layer_count"] == 3
    assert summary["counts"] == {"fp16": 1, "int8": 1, "fp32": 1}
    assert summary["layers"][0] == {"name": "conv1 + relu", "type": "CaskConvolution", "precision": "fp16"}


def test_summarize_layers_reads_the_split_fields_of_tensorrt_11():
    info = {"Layers": [{"Name": "conv", "LayerType": "CaskConvolution",
                        "Outputs": [{"Name": "y", "Format": "Channel major (kHWC8)", "DataType": "Half"}]}],
            "I/O Tensors": [{"Name": "x", "IOMode": "Input", "DataType": "Float"}]}
    assert summarize_layers(info)["counts"] == {"fp16": 1}


def test_summarize_layers_says_when_only_names_exist():
    summary = summarize_layers({"Layers": ["conv1 + relu", "fc"], "Bindings": ["x", "y"]})
    assert summary == {"available": False, "layer_count": 2,
                       "reason": "the engine was built without DETAILED profiling verbosity: only layer names exist"}
