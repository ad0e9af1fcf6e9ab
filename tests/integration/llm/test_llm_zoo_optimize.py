"""The zoo LLM end to end on real libraries: ``zoo build tiny-llama`` writes a Hugging Face folder that
transformers and tokenizers read back, and ``optimize --recipe int4`` turns it into an onnxruntime-genai folder
that ``onnxruntime_genai.Model`` loads and generates with. Everything offline (HF_HUB_OFFLINE=1)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="the zoo LLM is built with torch (pip install 'edgeopt[llm,torch]')")
pytest.importorskip("transformers", reason="the zoo LLM needs transformers (pip install 'edgeopt[llm]')")
pytest.importorskip("tokenizers", reason="the zoo LLM's tokenizer needs tokenizers (pip install 'edgeopt[llm]')")

from edgeopt.bench.manifest import load_manifest_artifacts  # noqa: E402
from edgeopt.errors import InputError
from edgeopt.llm.optimize import optimize_llm  # noqa: E402
from edgeopt.registry.lookup import detect_format  # noqa: E402
from tests.cli_here import edgeopt_here  # noqa: E402

pytestmark = pytest.mark.heavy  # LLM exports or a device's pip install: make test-heavy (in CI)

TEXT = 'def greet(name):\n    """Return a greeting."""\n    return f"Hello, {name}!"  # ünïcode ok\n'


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory) -> Path:
    """``zoo build tiny-llama``'s folder: built by :func:`edgeopt.zoo.build` once per checkout and edgeopt source in
    the suite's cache (tests/llm_models.py, shared with the sweep and llama.cpp tests) and copied here."""
    from tests.llm_models import tiny_llama_levels

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return tiny_llama_levels(tmp_path_factory.mktemp("zoo"))["src"]


@pytest.fixture(scope="module")
def int4_result(tiny_llama, tmp_path_factory):
    """The shipped int4 recipe's onnxruntime-genai block only (~6 s of CPU; the OpenVINO one is the slow test's)."""
    pytest.importorskip("onnxruntime_genai", reason="the export needs onnxruntime-genai (pip install 'edgeopt[llm]')")
    from edgeopt.llm.recipe import load_llm_recipe

    shipped = load_llm_recipe("int4")[0]
    recipe = tmp_path_factory.mktemp("recipe") / "int4-ort.yaml"
    recipe.write_text(json.dumps({"name": "int4-ort", "description": "the int4 recipe, onnxruntime-genai only",
                                  "onnxruntime_genai": shipped.block("onnxruntime_genai").model_dump()}))
    import edgeopt  # the public API: an LLM folder goes to the generative kind's optimize_api entry

    return edgeopt.optimize(tiny_llama, target="local", recipe=recipe, out_dir=tmp_path_factory.mktemp("opt") / "int4")


def test_zoo_tiny_llama_is_a_hugging_face_folder_transformers_and_tokenizers_read(tiny_llama):
    from tokenizers import Tokenizer
    from transformers import AutoConfig, AutoTokenizer

    names = {p.name for p in tiny_llama.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
            "generation_config.json", "zoo_llm.json"} <= names
    assert detect_format(tiny_llama) == "hf_llm"
    config = AutoConfig.from_pretrained(tiny_llama)
    assert config.model_type == "llama" and config.vocab_size == 2048 and config.num_hidden_layers == 4
    facts = json.loads((tiny_llama / "zoo_llm.json").read_text())
    assert 1_000_000 <= facts["parameters"] <= 5_000_000 and facts["trained"] is False
    tok = Tokenizer.from_file(str(tiny_llama / "tokenizer.json"))
    ids = tok.encode(TEXT).ids
    assert tok.decode(ids) == TEXT and max(ids) < config.vocab_size
    assert len(ids) < len(TEXT.encode()) / 2  # trained merges, not bytes
    hf_tok = AutoTokenizer.from_pretrained(tiny_llama)
    assert hf_tok.decode(hf_tok.encode(TEXT)) == TEXT


def test_optimize_int4_builds_an_onnxruntime_genai_folder_that_generates(int4_result):
    og = pytest.importorskip("onnxruntime_genai")
    art = int4_result.artifacts[0]
    folder = Path(art.path)
    assert detect_format(folder) == "onnxruntime_genai" and art.precision.value == "int4"
    assert art.pass_config["block_size"] == 32 and art.pass_config["accuracy_level"] == 4
    assert art.report["op_counts"]["MatMulNBits"] == 4 * 5 + 1  # qkv, o, gate, up, down per layer + lm_head
    assert art.parent_sha256 == int4_result.model.sha256 and art.size_bytes < int4_result.model.size_bytes / 2
    model = og.Model(str(folder))
    tokenizer = og.Tokenizer(model)
    prompt = tokenizer.encode("def main():")
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=len(prompt) + 8, min_length=len(prompt) + 8, do_sample=False)
    generator = og.Generator(model, params)
    generator.append_tokens(prompt)
    while not generator.is_done():
        generator.generate_next_token()
    assert len(generator.get_sequence(0)) == len(prompt) + 8


@pytest.mark.slow
def test_the_shipped_int4_recipe_also_builds_an_openvino_genai_folder_that_generates(tiny_llama, tmp_path):
    ov_genai = pytest.importorskip("openvino_genai", reason="needs openvino-genai (pip install 'edgeopt[llm]')")
    result = optimize_llm(tiny_llama, target="local", recipe="int4", out_dir=tmp_path / "int4")
    assert [a.format for a in result.artifacts] == ["onnxruntime_genai", "openvino_genai"]
    art = result.artifacts[1]
    assert detect_format(art.path) == "openvino_genai" and art.precision.value == "int4"
    assert art.pass_config == {"weights": "int4_sym", "group_size": 64, "ratio": 1.0}
    # 4 layers x 7 projections in int4; embeddings and lm_head in int8 (NNCF's backup mode)
    assert art.report["weight_types"]["i4"] == 28 and art.report["op_counts"]["ReadValue"] == 8
    pipe = ov_genai.LLMPipeline(art.path, "CPU")
    config = ov_genai.GenerationConfig()
    config.max_new_tokens = config.min_new_tokens = 8
    config.ignore_eos, config.do_sample = True, False
    result = pipe.generate(["def main():"], config)
    assert result.perf_metrics.get_num_generated_tokens() == 8 and result.texts[0]


def test_the_manifest_is_one_bench_reads(int4_result):
    target, artifacts = load_manifest_artifacts(int4_result.manifest_path)
    data = json.loads(Path(int4_result.manifest_path).read_text())
    assert target == "local" and [a.format for a in artifacts] == ["onnxruntime_genai"]
    assert data["kind"] == "llm" and data["versions"]["onnxruntime-genai"] and data["recipe"] == "int4-ort"


def test_the_public_optimize_refuses_graph_only_keywords_for_an_llm_folder(int4_result, tiny_llama, tmp_path):
    import edgeopt
    from edgeopt.llm.optimize import LlmOptimizeResult

    assert isinstance(int4_result, LlmOptimizeResult)  # the fixture went through edgeopt.optimize
    with pytest.raises(InputError, match="input_shapes, metric apply to graph models only"):
        edgeopt.optimize(tiny_llama, target="local", recipe="int4", input_shapes={"x": [1]}, metric="top1",
                         out_dir=tmp_path / "o")
    assert not (tmp_path / "o").exists()  # refused before any export


def test_cli_optimize_of_a_bad_folder_is_exit_2_with_one_line(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen2"}))
    (tmp_path / "tokenizer.json").write_text("{}")
    proc = edgeopt_here("optimize", str(tmp_path), "--target", "local", "--recipe", "int4")
    errors = [line for line in proc.stderr.splitlines() if "error" in line]
    assert proc.returncode == 2 and len(errors) == 1 and "lacks weights (*.safetensors)" in errors[0]


@pytest.mark.slow
def test_the_fp32_openvino_folder_generates_what_transformers_generates(tiny_llama, tmp_path):
    """The direct conversion (traced flat cache, beam_idx, states) is exact: greedy text equals transformers'.

    Both f32 properties are needed: OpenVINO's CPU plugin keeps the KV cache in u8 and may compute in bf16 by
    default, and a random model's top-2 logits are often <0.001 apart."""
    ov_genai = pytest.importorskip("openvino_genai", reason="needs openvino-genai (pip install 'edgeopt[llm]')")
    import openvino as ov
    from transformers import AutoModelForCausalLM, AutoTokenizer

    recipe = tmp_path / "ov-fp32.yaml"
    recipe.write_text("name: ov-fp32\ndescription: OpenVINO FP32 only\nopenvino_genai: {weights: fp32}\n")
    folder = optimize_llm(tiny_llama, target="local", recipe=recipe, out_dir=tmp_path / "o").artifacts[0].path
    config = ov_genai.GenerationConfig()
    config.max_new_tokens = config.min_new_tokens = 16
    config.ignore_eos, config.do_sample = True, False
    pipe = ov_genai.LLMPipeline(folder, "CPU", INFERENCE_PRECISION_HINT=ov.Type.f32, KV_CACHE_PRECISION=ov.Type.f32)
    ov_text = pipe.generate("def main():", config)
    tok = AutoTokenizer.from_pretrained(tiny_llama)
    ids = tok("def main():", return_tensors="pt").input_ids
    out = AutoModelForCausalLM.from_pretrained(tiny_llama).generate(ids, max_new_tokens=16, min_new_tokens=16,
                                                                     do_sample=False)
    assert ov_text == tok.decode(out[0, ids.shape[1]:])


def _calibration_text(path: Path) -> Path:
    """Real text the model's tokenizer was trained on the like of: the standard library's json package source."""
    import json as json_pkg

    path.write_text(Path(json_pkg.__file__).read_text(encoding="utf-8") * 2, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def awq_artifact(tiny_llama, tmp_path_factory):
    pytest.importorskip("openvino_genai", reason="needs openvino-genai (pip install 'edgeopt[llm]')")
    tmp = tmp_path_factory.mktemp("awq")
    text = _calibration_text(tmp / "calib.txt")
    awq = optimize_llm(tiny_llama, target="local", recipe="int4-awq", out_dir=tmp / "awq", calib=text)
    assert [a.format for a in awq.artifacts] == ["openvino_genai"]
    return awq.artifacts[0], text


def test_int4_awq_calibrates_on_text_and_generates(awq_artifact):
    """Issue 22: data-aware INT4 (AWQ + scale estimation) reads calibration text through the model's tokenizer
    (32 windows of 128 tokens) and the folder generates."""
    import openvino_genai as ov_genai

    art, text = awq_artifact
    assert art.precision.value == "int4" and art.pass_config["awq"] and art.pass_config["scale_estimation"]
    assert art.pass_config["calib_text"] == str(text) and art.report["calibration_windows"] == 32
    config = ov_genai.GenerationConfig()
    config.max_new_tokens = config.min_new_tokens = 4
    config.ignore_eos, config.do_sample = True, False
    assert ov_genai.LLMPipeline(art.path, "CPU").generate(["import json"], config).texts[0]


@pytest.mark.slow  # a second conversion
def test_int4_awq_gives_other_weights_than_int4_without_data(awq_artifact, tiny_llama, tmp_path):
    art, _ = awq_artifact
    plain = tmp_path / "plain.yaml"
    plain.write_text("name: plain\ndescription: int4 asym g64 without data\n"
                     "openvino_genai: {weights: int4_asym, group_size: 64}\n")
    ref = optimize_llm(tiny_llama, target="local", recipe=plain, out_dir=tmp_path / "plain").artifacts[0]
    assert ref.report["weight_types"] == art.report["weight_types"]  # same layers in int4...
    bins = [(Path(a.path) / "openvino_model.bin").read_bytes() for a in (art, ref)]
    assert len(bins[0]) == len(bins[1]) and bins[0] != bins[1]  # ...with other scales/weights


def test_a_data_aware_recipe_without_text_is_exit_2_with_one_line(tiny_llama, tmp_path):
    proc = edgeopt_here("optimize", str(tiny_llama), "--target", "local", "--recipe", "int4-awq", "--out",
                        str(tmp_path / "o"))
    assert proc.returncode == 2, proc.stderr
    assert "data-aware" in proc.stderr and "--calib TEXT" in proc.stderr and "Traceback" not in proc.stderr
    binary = tmp_path / "calib.bin"
    binary.write_bytes(b"\xff\xfe\x00" * 200)
    proc = edgeopt_here("optimize", str(tiny_llama), "--target", "local", "--recipe", "int4-awq", "--calib",
                        str(binary), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "cannot read it as UTF-8 text" in proc.stderr
