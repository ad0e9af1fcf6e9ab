"""llama.cpp end to end on the zoo's random-weight tiny-llama (hidden 128, intermediate 384): GGUFs made by
llama.cpp's own converter and quantizer (``optimize LLM_DIR --recipe q4_0``, the sweep's levels), benched by the
``llama_cpp`` agent runtime (llama-cpp-python) as a file and as a folder, scored for retention against the F32
GGUF, and swept with a deployment that ``bench`` then runs. Real CLI calls, the real agent as the local runner's
subprocess. Each export is a child process that imports torch (~20-40 s on 2 busy cores): the fp32 and q8_0 levels
are built once per checkout and edgeopt source (tests/llm_models.py's cache, shared with the SSH tests) and the
sweeps reuse them."""

from __future__ import annotations

import importlib.util
import json
import shutil
import textwrap
from pathlib import Path

import numpy as np
import pytest

for _module, _why in (("llama_cpp", "the llama_cpp runtime and the GGUF quantizer need llama-cpp-python (pip install "
                                    "'edgeopt[llamacpp]'; it compiles llama.cpp, ~15 min on 2 cores)"),
                      ("torch", "the zoo LLM and llama.cpp's converter need torch (pip install 'edgeopt[torch]')"),
                      ("transformers", "llama.cpp's converter needs transformers (pip install 'edgeopt[llm]')"),
                      ("tokenizers", "the zoo LLM's tokenizer is trained with tokenizers (pip install 'edgeopt[llm]')"),
                      ("sentencepiece", "llama.cpp's converter imports sentencepiece (pip install "
                                        "'edgeopt[llamacpp]')")):
    pytest.importorskip(_module, reason=_why)

from edgeopt.cli.main import main  # noqa: E402

pytestmark = pytest.mark.heavy  # LLM exports or a device's pip install: make test-heavy (in CI)

SMALL = ["--prompt-tokens", "8", "--gen-tokens", "12", "--repetitions", "10", "--gen-warmup", "1", "--no-kv-probe",
         "--no-energy", "--no-history", "--threads", "1"]
TEXT = "import json\nclass Path(object):\n    '''A path.'''\n    def name(self): return 1\n" * 40


@pytest.fixture(scope="module")
def gguf(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """tiny-llama, its fp32 (the converter's F32 GGUF) and q8_0 levels and onnxruntime-genai's fp32 level (the
    suite's cached builds, tests/llm_models.py), and a held-out text."""
    from tests.llm_models import tiny_llama_levels

    root = tmp_path_factory.mktemp("llamacpp")
    levels = [("llama_cpp", "fp32"), ("llama_cpp", "q8_0")]
    if importlib.util.find_spec("onnxruntime_genai") is not None:  # the mixed sweep's other runtime
        levels.append(("onnxruntime_genai", "fp32"))
    built = tiny_llama_levels(root, *levels)
    text = root / "heldout.txt"
    text.write_text(TEXT)
    return {**built, "text": text, **{name: built["levels"] / "llama_cpp" / name for name in ("fp32", "q8_0")}}


def test_optimize_q4_0_is_llama_cpps_gguf_with_its_real_type_mix_and_k_quants_are_refused(gguf, tmp_path, capsys):
    assert main(["optimize", str(gguf["src"]), "--target", "local", "--recipe", "q4_0", "--out", str(tmp_path / "o"),
                 "--json"]) == 0
    manifest = json.loads(capsys.readouterr().out)
    (art,) = manifest["artifacts"]
    assert art["format"] == "gguf" and art["pass_name"] == "llama_cpp_gguf" and art["precision"] == "int4"
    assert (Path(art["path"]) / "model.gguf").read_bytes()[:4] == b"GGUF"
    report = art["report"]
    assert report["pre_tokenizer_declared"] == "gpt-2"  # the zoo's byte-level BPE, unknown to the converter
    assert report["tensor_types"]["Q4_0"] == report["tensors_at_type"] > 0 and report["matrices"] == 30
    assert sum(report["tensor_types"].values()) == 39  # 30 matrices + 9 norms (F32)
    assert manifest["versions"]["llama-cpp-python"]
    # every row of tiny-llama is 128 or 384 wide: no K-quant super-block of 256 fits, so q4_k_m cannot apply
    code = main(["optimize", str(gguf["src"]), "--target", "local", "--recipe", "q4_k_m", "--out",
                 str(tmp_path / "k"), "--json"])
    assert code == 2 and "multiples of 256" in capsys.readouterr().err


def test_q4_0_imatrix_weighs_the_columns_the_calibration_text_uses(gguf, tmp_path, capsys, monkeypatch):
    """#33: the importance-matrix level. llama.cpp's quantizer got the imatrix (each column's mean squared activation
    on the calibration text, collected on the HF model): every Q4_0 matrix it wrote has a lower importance-weighted
    rounding error than the plain Q4_0 of the same F32 weights (gguf-py's reference quantizer). Without --calib it
    is exit 2, before any export."""
    from edgeopt.llm.gguf_export import converter_dir, llama_cpp_version
    from edgeopt.zoo.llm_corpus import corpus_texts, split_texts

    calib = tmp_path / "calib.txt"
    calib.write_text("\n".join(split_texts(corpus_texts())[0])[:40000], encoding="utf-8")
    assert main(["optimize", str(gguf["src"]), "--target", "local", "--recipe", "q4_0-imatrix", "--out",
                 str(tmp_path / "i"), "--calib", str(calib), "--json"]) == 0
    (art,) = json.loads(capsys.readouterr().out)["artifacts"]
    assert art["pass_config"]["imatrix"] and art["pass_config"]["calib_text"] == str(calib)
    facts = art["report"]["imatrix"]
    assert facts["tensors"] == 28 and facts["windows"] == 32 and facts["tokens"] == 32 * 128  # 4 layers x 7
    conv = converter_dir(llama_cpp_version())
    monkeypatch.syspath_prepend(str(conv))
    monkeypatch.syspath_prepend(str(conv / "gguf-py"))
    from gguf import GGMLQuantizationType, GGUFReader
    from gguf.quants import dequantize, quantize

    from edgeopt.llm.gguf_imatrix import collect, gguf_names

    means, _ = collect(gguf["src"], calib, 32, 128)
    weights = gguf_names(gguf["src"], means)
    f32 = {t.name: t for t in GGUFReader(str(gguf["fp32"] / "model.gguf")).tensors}
    ratios = []
    for t in GGUFReader(str(Path(art["path"]) / "model.gguf")).tensors:
        if t.name not in weights or t.tensor_type != GGMLQuantizationType.Q4_0:
            continue
        w = np.asarray(f32[t.name].data, dtype=np.float32)
        plain = dequantize(quantize(w, GGMLQuantizationType.Q4_0), GGMLQuantizationType.Q4_0)
        aware = dequantize(t.data, t.tensor_type).reshape(w.shape)
        ratios.append(float(((w - aware) ** 2 * weights[t.name]).sum() / ((w - plain) ** 2 * weights[t.name]).sum()))
    assert len(ratios) >= 24 and max(ratios) < 1.0, ratios
    code = main(["optimize", str(gguf["src"]), "--target", "local", "--recipe", "q4_0-imatrix", "--out",
                 str(tmp_path / "n"), "--json"])
    assert code == 2 and "--calib TEXT" in capsys.readouterr().err and not (tmp_path / "n").exists()


def test_bench_a_single_gguf_file_and_a_q8_0_kv_cache(gguf, tmp_path, capsys):
    single = tmp_path / "tiny-f32.gguf"
    shutil.copyfile(gguf["fp32"] / "model.gguf", single)
    assert main(["bench", str(single), *SMALL, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["runtime"]["name"] == "llama_cpp" and result["model_format"] == "gguf" and result["valid"]
    (cell,) = result["cells"]
    assert cell["tokens_out"] == 12 and len(cell["tpot_trace_ms"]) == 11
    assert cell["decode_tokens_per_s"] > 0 and cell["prefill_tokens_per_s"] > 0 and cell["ttft_ms_p50"] > 0
    assert cell["runtime_tpot_ms_mean"] > 0 and cell["runtime_ttft_ms_mean"] > 0  # llama.cpp's own counters
    runtime = result["runtime"]
    assert runtime["n_ctx"] == 512 and runtime["threads"] == 1 and runtime["cache_type"] == "f16"
    assert runtime["use_mmap"] and "RssFile" in runtime["memory_note"] and runtime["rss_file_kb"] is not None
    head, layers, kv_heads = 32, 4, 2
    assert cell["kv_dtype_bytes"] == 2
    assert cell["kv_cache_bytes"] == layers * 2 * kv_heads * head * 20 * 2  # 8 + 12 tokens of f16
    assert cell["kv_cache_bytes_allocated"] == layers * 2 * kv_heads * head * 512 * 2  # n_ctx, allocated at load

    assert main(["bench", str(gguf["q8_0"]), *SMALL, "--runtime-option", "cache_type=q8_0", "--json"]) == 0
    q8 = json.loads(capsys.readouterr().out)
    assert q8["runtime"]["cache_type"] == "q8_0" and q8["runtime"]["flash_attn"] is True
    (cell,) = q8["cells"]
    assert cell["kv_dtype_bytes"] == 1  # plus one fp16 scale per 32 values
    assert cell["kv_cache_bytes"] == layers * 2 * kv_heads * 20 * (head + 2 * head // 32)


def test_a_batch_above_one_is_a_runtime_error_naming_it(gguf, capsys):
    code = main(["bench", str(gguf["q8_0"]), *SMALL, "--batch", "2", "--json"])
    assert code == 3 and "one sequence per generation (batch 1); got batch 2" in capsys.readouterr().err


def test_the_gguf_tokenizes_as_the_hf_folder_and_q8_0_keeps_the_f32_behaviour(gguf):
    from transformers import AutoTokenizer

    from edgeopt.llm.retention import RetentionSettings, llm_retention
    from edgeopt_agent import runtimes

    rt = runtimes.create("llama_cpp")
    rt.load_scoring(str(gguf["fp32"]), {}, 1)
    text = "def name(self):\n    '''A path; with json.'''  return 1 + 2"
    assert rt.tokenize(text) == AutoTokenizer.from_pretrained(str(gguf["src"]))(text)["input_ids"]
    kept = llm_retention(gguf["q8_0"], gguf["fp32"], gguf["text"], settings=RetentionSettings(window=32, windows=2,
                                                                                              threads=1))
    assert kept.positions == 62 and kept.top1_agreement >= 0.9 and kept.kl_mean >= 0
    same = llm_retention(gguf["fp32"], gguf["fp32"], gguf["text"], settings=RetentionSettings(window=32, windows=2,
                                                                                              threads=1))
    assert same.top1_agreement == 1.0 and same.kl_mean < 1e-6


def test_the_timed_token_loop_is_greedy_decoding_as_teacher_forcing_scores_it(gguf):
    """The agent's token loop (one llama_decode and the argmax of its logits per token, no Llama.eval) continues
    the prompt exactly as the argmax of the same model's teacher-forced logits, token by token, and a generation
    after it starts from a clean cache (the binding's position count kept)."""
    from edgeopt_agent import runtimes

    rt = runtimes.create("llama_cpp")
    rt.load(str(gguf["fp32"]), {}, 1)
    prompt = rt.tokenize("class Path(object):\n    def name(self):")
    out = rt.greedy(prompt, 10)
    again = rt.generate_once([prompt], [[]], 10)
    assert again["tokens_out"] == 10 and len(again["token_ns"]) == 9 and min(again["token_ns"]) > 0
    assert rt.greedy(prompt, 10) == out  # the cache is reset between generations: same continuation
    rt.load_scoring(str(gguf["fp32"]), {}, 1)
    forced = rt.logits(prompt + out[:-1])[len(prompt) - 1:]
    top2 = np.sort(forced, axis=1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 1e-3  # a batched and a one-token decode may round a near-tie either way
    assert clear.sum() >= 8
    assert all(int(np.argmax(row)) == tok for row, tok, c in zip(forced, out, clear, strict=True) if c)


def test_a_generation_past_the_context_stops_with_a_line_naming_the_token_and_the_fix(gguf):
    """The bench refuses such a cell before it runs (its context check); the runtime's own loop says it too when
    called directly: which token found no room in the cache, and that n_ctx must hold prompt and generation; a
    prompt longer than the context stops at its decode with the same fix, and an argmax where llama.cpp kept no
    logits (nothing decoded yet) is an error, not a read of a NULL buffer."""
    from edgeopt_agent import runtimes

    rt = runtimes.create("llama_cpp")
    rt.load(str(gguf["q8_0"]), {"n_ctx": 256}, 1)
    with pytest.raises(RuntimeError, match=r"^llama_decode failed at generated token \d+ \(context 256 tokens\): "
                                           r"give n_ctx room for the prompt and the generation$"):
        rt.generate_once([rt.tokenize("class Path(object):")], [[]], 300)
    # a prompt the context cannot hold stops at its decode, and a read of logits llama.cpp did not keep says so
    line = rt.tokenize("class Path(object):")
    ids = line * (300 // len(line) + 1)  # > 256 tokens
    with pytest.raises(RuntimeError, match=rf"^llama_decode failed on the {len(ids)}-token prompt \(context 256 "
                                           r"tokens\): give n_ctx room for the prompt and the generation$"):
        rt.generate_once([ids], [[]], 4)
    from edgeopt_agent.runtimes.llamacpp_rt import _Argmax

    rt.load(str(gguf["q8_0"]), {"n_ctx": 256}, 1)  # nothing decoded yet: no logits
    with pytest.raises(RuntimeError, match="llama.cpp returned no logits for the last position"):
        _Argmax(rt._lc, rt._llm.ctx, 8)()


def test_sweep_measures_the_gguf_levels_skips_k_quants_with_the_reason_and_ships_a_deployment(gguf, tmp_path,
                                                                                              capsys):
    out = tmp_path / "sweep"
    shutil.copytree(gguf["levels"], out / "levels")  # fp32 and q8_0 built: the sweep only measures them
    code = main(["sweep", str(gguf["src"]), "--eval", str(gguf["text"]), "--runtimes", "llama_cpp", "--levels",
                 "q8_0,q4_k_m", "--min-retention", "0.5", "--eval-limit", "2", "--threads", "1", "--out", str(out),
                 "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-2000:]
    sweep = json.loads(captured.out)
    assert {(lv["name"], lv["runtime"]) for lv in sweep["levels"]} == {("q8_0", "llama_cpp"), ("fp32", "llama_cpp")}
    assert any(w.startswith("q4_k_m@llama_cpp skipped") and "multiples of 256" in w for w in sweep["warnings"])
    rec = sweep["recommendation"]
    assert rec["runtime"] == "llama_cpp"
    shipped = Path(rec["deployment"])
    deployment = json.loads((shipped / "deployment.json").read_text())
    assert deployment["model"] == "model.gguf" and deployment["format"] == "gguf"
    assert [f["path"] for f in deployment["files"]] == ["model.gguf"] and deployment["threads"] == 1
    assert rec["shipped_check"]["passed"] is True and deployment["shipped_check"] == rec["shipped_check"]
    # what ships is what was measured: the context size, batch and KV cache type the agent reported for the bench
    row = next(lv for lv in sweep["levels"] if (lv["name"], lv["runtime"]) == (rec["name"], rec["runtime"]))
    options = deployment["runtime_options"]
    assert options == row["runtime_options"] and options["cache_type"] == "f16", options
    assert options["n_ctx"] > 0 and options["n_batch"] > 0 and "model_file" not in options, options
    assert main(["bench", str(shipped), *SMALL, "--json"]) == 0  # the deployment runs, its hashes checked
    ran = json.loads(capsys.readouterr().out)
    assert ran["deployment"]["name"] == deployment["name"]
    assert {k: ran["runtime"][k] for k in ("n_ctx", "n_batch", "cache_type")} == {
        k: options[k] for k in ("n_ctx", "n_batch", "cache_type")}
    assert main(["bench", str(shipped), *SMALL, "--runtime-option", "cache_type=q8_0", "--json"]) == 2
    assert "contradicts deployment" in capsys.readouterr().err


def test_qualify_gates_a_gguf_folder_with_the_llm_gates(gguf, tmp_path, capsys):
    """``llm.runtime: llama_cpp`` names the runtime that delivers the file's format (gguf; the two names differ,
    unlike the first two generative runtimes'); another runtime's name is refused for a GGUF (exit 2)."""
    spec = tmp_path / "q.yaml"
    spec.write_text(textwrap.dedent(f"""
        name: gguf-qualify
        model: {{path: {gguf['q8_0']}}}
        llm: {{runtime: llama_cpp, prompt_tokens: [8], gen_tokens: [12], threads: [1], repetitions: 10, warmup: 1}}
        gates:
          tpot_ms: {{max_ms: 10000}}
          decode_tokens_per_s: {{min_tokens_per_s: 0.001}}
        """))
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(spec.read_text().replace("runtime: llama_cpp", "runtime: openvino_genai"))
    assert main(["qualify", str(wrong), "--report-dir", str(tmp_path / "w"), "--no-history", "--json"]) == 2
    assert "a gguf model (run by llama_cpp), not openvino_genai" in capsys.readouterr().err
    code = main(["qualify", str(spec), "--report-dir", str(tmp_path / "q"), "--no-history", "--json"])
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert code == 0, (out, captured.err[-1500:])
    (device,) = out["devices"]
    assert device["llm"]["runtime"]["name"] == "llama_cpp" and device["llm"]["model_format"] == "gguf"
    assert {g["gate"] for g in device["gates"]} >= {"tpot_ms", "decode_tokens_per_s"}


def test_one_sweep_ranks_gguf_levels_beside_onnxruntime_genais(gguf, tmp_path, capsys):
    """The runtimes' levels come from their descriptors; every passing level of both runtimes is timed in the same
    interleaved rounds and one recommendation names the fastest (onnxruntime-genai's fp32 level comes built
    with the fixture's levels: the sweep only measures it)."""
    pytest.importorskip("onnxruntime_genai", reason="the mixed sweep needs onnxruntime-genai (edgeopt[llm])")
    out = tmp_path / "sweep"
    shutil.copytree(gguf["levels"], out / "levels")
    code = main(["sweep", str(gguf["src"]), "--eval", str(gguf["text"]), "--runtimes", "onnxruntime_genai,llama_cpp",
                 "--levels", "q8_0", "--min-retention", "0.5", "--eval-limit", "2", "--threads", "1", "--out",
                 str(out), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-2000:]
    sweep = json.loads(captured.out)
    rows = {(lv["name"], lv["runtime"]): lv for lv in sweep["levels"]}
    assert set(rows) == {("fp32", "onnxruntime_genai"), ("fp32", "llama_cpp"), ("q8_0", "llama_cpp")}
    assert all(lv["passed"] and lv["rounds_tpot_ms"] and lv["rank_tokens_per_s"] for lv in rows.values())
    assert len({len(lv["rounds_tpot_ms"]) for lv in rows.values()}) == 1  # the same rounds for every level
    rec = sweep["recommendation"]
    assert (rec["name"], rec["runtime"]) in rows
    assert json.loads((Path(rec["deployment"]) / "deployment.json").read_text())["runtime"] == rec["runtime"]
