"""What makes a folder an LLM model of each kind, checked without importing any runtime or ``transformers``.

The format descriptors (``edgeopt/registry/formats/{hf_llm,onnxruntime_genai,openvino_genai}.py``) ask here, so
``bench`` and ``optimize`` tell a folder's kind the same way, and a bad folder is one line naming what is missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import inbound
from ..errors import ModelLoadError

# Decoder families whose Hugging Face folders edgeopt takes (the onnxruntime-genai model builder and OpenVINO
# GenAI both export them). Keyed by config.json ``model_type``; the value is the expected architecture class.
DECODER_FAMILIES: dict[str, str] = {
    "llama": "LlamaForCausalLM",
    "qwen2": "Qwen2ForCausalLM",
    "qwen3": "Qwen3ForCausalLM",
    "phi3": "Phi3ForCausalLM",
    "gemma": "GemmaForCausalLM",
    "gemma2": "Gemma2ForCausalLM",
    "gemma3_text": "Gemma3ForCausalLM",
}
HF_TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model")


def read_json(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``.

    Raises:
        ModelLoadError: unreadable, not JSON, or not an object.
    """
    try:
        data = inbound.read_json(path)
    except OSError as exc:
        raise ModelLoadError(f"cannot read {path} ({exc.strerror}): check the permissions") from None
    except ValueError as exc:
        raise ModelLoadError(f"{path} is not valid JSON ({exc}): re-export the folder") from None
    if not isinstance(data, dict):
        raise ModelLoadError(f"{path} holds no JSON object: re-export the folder")
    return data


def _missing(path: Path, what: list[str], fix: str) -> None:
    if what:
        raise ModelLoadError(f"LLM folder {path} lacks {', '.join(what)}: {fix}")


def check_hf_folder(path: Path) -> dict[str, Any]:
    """Check a Hugging Face decoder folder and return its ``config.json``.

    Raises:
        ModelLoadError: a missing file (weights, tokenizer), or a model type that is not a supported decoder.
    """
    config = read_json(path / "config.json")
    model_type = str(config.get("model_type", ""))
    if model_type not in DECODER_FAMILIES:
        raise ModelLoadError(
            f"{path / 'config.json'}: model_type '{model_type or '(none)'}' is not a supported decoder LLM; "
            f"supported: {', '.join(DECODER_FAMILIES)} (docs/llm.md)")
    missing = []
    if not any(path.glob("*.safetensors")):
        missing.append("weights (*.safetensors)")
    if not any((path / name).is_file() for name in HF_TOKENIZER_FILES):
        missing.append("a tokenizer (tokenizer.json or tokenizer.model)")
    _missing(path, missing, "save the model with save_pretrained(safe_serialization=True) and its tokenizer")
    return config


def check_genai_folder(path: Path) -> dict[str, Any]:
    """Check an onnxruntime-genai folder and return its ``genai_config.json``.

    Raises:
        ModelLoadError: the decoder ONNX file it names, or the tokenizer, is missing.
    """
    config = read_json(path / "genai_config.json")
    decoder = config.get("model", {}).get("decoder", {}) if isinstance(config.get("model"), dict) else {}
    filename = decoder.get("filename") if isinstance(decoder, dict) else None
    missing = []
    if not isinstance(filename, str) or not (path / filename).is_file():
        missing.append(f"the decoder model ({filename or 'model.decoder.filename unset in genai_config.json'})")
    if not (path / "tokenizer.json").is_file() and not (path / "tokenizer.model").is_file():
        missing.append("a tokenizer (tokenizer.json)")
    _missing(path, missing, "re-run the onnxruntime-genai model builder into an empty folder")
    return config


OV_GENAI_FILES = ("openvino_model.xml", "openvino_model.bin", "openvino_tokenizer.xml", "openvino_tokenizer.bin",
                  "openvino_detokenizer.xml", "openvino_detokenizer.bin")


def check_ov_genai_folder(path: Path) -> None:
    """Check an OpenVINO GenAI IR folder: the stateful model, its tokenizer and detokenizer IRs.

    Raises:
        ModelLoadError: one of them is missing.
    """
    missing = [name for name in OV_GENAI_FILES if not (path / name).is_file()]
    _missing(path, missing, "export with optimum-cli export openvino (or convert_tokenizer --with-detokenizer for "
                            "the tokenizer files)")
