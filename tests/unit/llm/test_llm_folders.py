"""LLM folders: which kind a folder is (Hugging Face, onnxruntime-genai, OpenVINO GenAI) and the one-line error
that names what a bad one lacks. Files are written by hand: detection reads names and JSON, never weights."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgeopt.errors import ExitCode, ModelLoadError
from edgeopt.registry import get_format
from edgeopt.registry.lookup import detect_format, model_digest


def _hf(folder: Path, model_type: str = "llama", *, weights: bool = True, tokenizer: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"model_type": model_type, "architectures": ["X"]}))
    if weights:
        (folder / "model.safetensors").write_bytes(b"\0" * 16)
    if tokenizer:
        (folder / "tokenizer.json").write_text("{}")
    return folder


def _genai(folder: Path, *, decoder: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "genai_config.json").write_text(json.dumps({"model": {"decoder": {"filename": "model.onnx"}}}))
    (folder / "tokenizer.json").write_text("{}")
    if decoder:
        (folder / "model.onnx").write_bytes(b"x")
    return folder


def _ov(folder: Path, *, detokenizer: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    names = ["openvino_model", "openvino_tokenizer"] + (["openvino_detokenizer"] if detokenizer else [])
    for name in names:
        (folder / f"{name}.xml").write_text("<net/>")
        (folder / f"{name}.bin").write_bytes(b"\0")
    (folder / "config.json").write_text(json.dumps({"model_type": "llama"}))  # optimum writes it too
    return folder


@pytest.mark.parametrize("model_type", ["llama", "qwen2", "qwen3", "phi3", "gemma", "gemma2", "gemma3_text"])
def test_hugging_face_decoder_folders_of_each_family_are_hf_llm(tmp_path, model_type):
    assert detect_format(_hf(tmp_path / model_type, model_type)) == "hf_llm"


def test_exported_folders_are_told_apart_even_with_a_config_json(tmp_path):
    assert detect_format(_genai(tmp_path / "g")) == "onnxruntime_genai"
    assert detect_format(_ov(tmp_path / "ov")) == "openvino_genai"


@pytest.mark.parametrize(("make", "missing"), [
    (lambda p: _hf(p, weights=False), "weights (*.safetensors)"),
    (lambda p: _hf(p, tokenizer=False), "a tokenizer (tokenizer.json or tokenizer.model)"),
    (lambda p: _genai(p, decoder=False), "the decoder model (model.onnx)"),
    (lambda p: _ov(p, detokenizer=False), "openvino_detokenizer.xml, openvino_detokenizer.bin"),
])
def test_a_bad_folder_is_one_line_naming_what_is_missing(tmp_path, make, missing):
    folder = make(tmp_path / "m")
    with pytest.raises(ModelLoadError) as info:
        detect_format(folder)
    message = str(info.value)
    assert "\n" not in message and str(folder) in message and missing in message
    assert info.value.exit_code == ExitCode.USAGE == 2


def test_an_encoder_or_unknown_model_type_is_refused_with_the_supported_list(tmp_path):
    with pytest.raises(ModelLoadError, match=r"model_type 'bert' is not a supported decoder LLM; supported: llama"):
        detect_format(_hf(tmp_path / "b", "bert"))


def test_a_folder_of_nothing_known_names_the_folder_kinds(tmp_path):
    (tmp_path / "readme.txt").write_text("hi")
    with pytest.raises(ModelLoadError, match="no model folder.*genai_config.json.*openvino_model.xml"):
        detect_format(tmp_path)


def test_a_broken_config_json_is_one_line(tmp_path):
    folder = _hf(tmp_path / "m")
    (folder / "config.json").write_text("{not json")
    with pytest.raises(ModelLoadError, match=r"config.json is not valid JSON"):
        detect_format(folder)


def test_the_folder_digest_covers_every_file(tmp_path):
    folder = _hf(tmp_path / "m")
    before, size = model_digest(folder, "hf_llm")
    (folder / "tokenizer.json").write_text('{"x": 1}')
    assert model_digest(folder, "hf_llm")[0] != before and size > 0
    assert not get_format("hf_llm").deployable and get_format("onnxruntime_genai").deployable


def test_a_runtime_for_a_source_folder_says_to_optimize_it_first():
    from edgeopt.errors import InputError
    from edgeopt.registry.lookup import default_runtime
    from edgeopt.targets import load_registry

    with pytest.raises(InputError, match="hf_llm.*source format: run edgeopt optimize"):
        default_runtime("hf_llm", load_registry().get("local"))
