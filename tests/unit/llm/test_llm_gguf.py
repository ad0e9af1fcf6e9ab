"""GGUF as data (no llama.cpp needed): the format told by suffix, folder and magic; the llama_cpp levels validated
by its exporter; which levels cannot reach a model's matrices; the converter fetched from the sdist's
vendor/llama.cpp only; the tokenizers declared as llama.cpp's gpt-2 pre-tokenizer."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from edgeopt.errors import ModelLoadError
from edgeopt.llm.gguf_export import (
    EXPORTER,
    GgufSettings,
    _extract,
    _gpt2_byte_level,
    converter_dir,
    width_problem,
)
from edgeopt.llm.sweep_levels import all_levels, reference_level
from edgeopt.registry import get_runtime
from edgeopt.registry.kind_spec import GENERATIVE
from edgeopt.registry.lookup import detect_format, format_of_kind, model_digest, model_kind

HEAD = b"GGUF\x03\x00\x00\x00" + b"\x00" * 24


def test_a_gguf_is_a_file_by_suffix_or_a_folder_by_model_gguf_and_checked_by_its_magic(tmp_path):
    single = tmp_path / "tiny.Q4_0.gguf"
    single.write_bytes(HEAD)
    folder = tmp_path / "level"
    folder.mkdir()
    (folder / "model.gguf").write_bytes(HEAD)
    (folder / ".edgeopt-level.json").write_text("{}")
    assert detect_format(single) == "gguf" == detect_format(folder)
    assert model_kind(single) == "generative" == model_kind(folder)
    found = {format_of_kind(p, GENERATIVE, deployable=True) for p in (single, folder)}
    assert found == {"gguf"}  # bench's generative branch
    assert model_digest(folder, "gguf") == model_digest(single, "gguf")  # the GGUF alone, not the level stamp
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"\x08\x01onnx bytes")
    with pytest.raises(ModelLoadError, match="GGUF magic"):
        detect_format(fake)


def test_levels_are_data_validated_by_the_exporter_with_the_f32_conversion_as_reference():
    levels = {lv.name: lv.settings for lv in all_levels() if lv.runtime == "llama_cpp"}
    assert {k: v.type for k, v in levels.items()} == {"q4_0": "Q4_0", "q4_k_m": "Q4_K_M", "q5_k_m": "Q5_K_M",
                                                      "q6_k": "Q6_K", "q8_0": "Q8_0", "f16": "F16", "fp32": "F32"}
    assert reference_level("llama_cpp").settings == GgufSettings(type="F32")
    assert get_runtime("llama_cpp").delivers == "gguf" and get_runtime("llama_cpp").serves("generative")
    assert [EXPORTER.weight_precision(levels[n]).value for n in ("q4_k_m", "q8_0", "f16", "fp32")] == [
        "int4", "int8", "fp16", "fp32"]


@pytest.mark.parametrize(("config", "level", "skipped"), [
    ({"hidden_size": 128, "intermediate_size": 384}, "Q4_K_M", True),  # the zoo's tiny-llama: no row of 256
    ({"hidden_size": 128, "intermediate_size": 384}, "Q6_K", True),
    ({"hidden_size": 128, "intermediate_size": 384}, "Q4_0", False),  # blocks of 32 fit
    ({"hidden_size": 192, "intermediate_size": 512}, "Q4_K_M", False),  # tiny-llama-trained: ffn_down takes it
    ({"hidden_size": 896, "intermediate_size": 4864}, "Q5_K_M", False),  # Qwen2-0.5B: a mix, recorded
    ({"hidden_size": 100, "intermediate_size": 300}, "Q8_0", True),
    ({"hidden_size": 100, "intermediate_size": 300}, "F16", False),
])
def test_a_level_is_skipped_only_when_none_of_the_models_rows_fits_its_block(config, level, skipped):
    why = EXPORTER.cannot_apply(config, GgufSettings(type=level))
    assert (why is not None) is skipped
    if skipped:
        assert why == width_problem(config, level) and str(config["hidden_size"]) in why and "fallback" in why


def test_the_converter_comes_from_the_sdists_vendor_llama_cpp_only(tmp_path):
    sdist = tmp_path / "llama_cpp_python-9.9.tar.gz"
    files = {"llama_cpp_python-9.9/vendor/llama.cpp/convert_hf_to_gguf.py": b"print('converter')",
             "llama_cpp_python-9.9/vendor/llama.cpp/conversion/base.py": b"",
             "llama_cpp_python-9.9/vendor/llama.cpp/gguf-py/gguf/__init__.py": b"",
             "llama_cpp_python-9.9/vendor/llama.cpp/ggml/src/ggml.c": b"int x;",
             "llama_cpp_python-9.9/vendor/llama.cpp/conversion/../../../escape.py": b"",
             "llama_cpp_python-9.9/setup.py": b""}
    with tarfile.open(sdist, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    _extract(sdist, tmp_path / "out")
    got = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert got == ["conversion/base.py", "convert_hf_to_gguf.py", "gguf-py/gguf/__init__.py"]
    assert not (tmp_path / "escape.py").exists()
    ready = tmp_path / "tools" / "llama_cpp_convert" / "9.9"
    (ready / "gguf-py" / "gguf").mkdir(parents=True)
    (ready / "convert_hf_to_gguf.py").write_text("")
    assert converter_dir("9.9", tmp_path / "tools") == ready  # there already: nothing downloaded


def _tokenizer(folder: Path, pre: dict) -> Path:
    folder.mkdir()
    (folder / "tokenizer.json").write_text(json.dumps({"pre_tokenizer": pre}))
    return folder


def test_only_gpt2s_byte_level_pre_tokenizer_is_declared_as_llama_cpps_gpt2(tmp_path):
    zoo = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    assert _gpt2_byte_level(_tokenizer(tmp_path / "zoo", zoo))
    assert not _gpt2_byte_level(_tokenizer(tmp_path / "prefix", {**zoo, "add_prefix_space": True}))
    assert not _gpt2_byte_level(_tokenizer(tmp_path / "noregex", {**zoo, "use_regex": False}))
    assert not _gpt2_byte_level(_tokenizer(tmp_path / "spm", {"type": "Metaspace", "replacement": "_"}))
    assert not _gpt2_byte_level(tmp_path / "missing")
