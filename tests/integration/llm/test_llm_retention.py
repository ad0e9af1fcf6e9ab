"""Retention of generative models, scored on the device by the agent (edgeopt_agent.llm_eval) and compared on the
host (edgeopt.llm.retention): the zoo's random-weight tiny-llama, exported by the real onnxruntime-genai builder and
OpenVINO conversion. Random weights still make top-1 agreement meaningful between FP32 and INT4: both carry the same
weights, INT4 rounds them. The LLM sweep built on it: test_llm_sweep.py."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnxruntime_genai", reason="the LLM retention tests need onnxruntime-genai (edgeopt[llm])")
pytest.importorskip("torch", reason="the zoo LLM is built with torch (pip install 'edgeopt[llm,torch]')")
pytest.importorskip("transformers", reason="the zoo LLM needs transformers (pip install 'edgeopt[llm]')")

from edgeopt.errors import InputError  # noqa: E402
from edgeopt.llm.retention import llm_retention  # noqa: E402
from edgeopt.llm.sweep_levels import build_level  # noqa: E402
from edgeopt.registry.lookup import model_digest  # noqa: E402
from tests.cli_here import edgeopt_here  # noqa: E402
from tests.integration.llm.zoo_levels import FAST, zoo_level  # noqa: E402


def test_fp32_against_itself_keeps_everything(zoo):
    r = llm_retention(zoo["fp32"], zoo["fp32"], zoo["text"], settings=FAST)
    assert r.retention == r.top1_agreement == r.topk_overlap == 1.0
    assert r.kl_mean < 1e-9 and r.kl_exact  # K = 2048 covers the zoo vocabulary: the KL is exact
    assert r.ppl_candidate == pytest.approx(r.ppl_reference) and r.ppl_reference > 1
    assert r.first_divergence == [None, None] and r.greedy_tokens == 8
    assert r.positions == 4 * 31 and r.windows == 4


def test_int4_loses_agreement_and_diverges(zoo):
    r = llm_retention(zoo["int4"], zoo["fp32"], zoo["text"], settings=FAST)
    assert 0.2 < r.top1_agreement < 1.0 and r.topk_overlap < 1.0
    assert r.kl_mean > 1e-5 and r.ppl_candidate != pytest.approx(r.ppl_reference, rel=1e-6)
    assert any(d is not None for d in r.first_divergence)
    kl = llm_retention(zoo["int4"], zoo["fp32"], zoo["text"], settings=FAST, metric="kl")
    assert kl.retention == pytest.approx(np.exp(-kl.kl_mean)) and kl.kl_mean == pytest.approx(r.kl_mean)


def test_custom_metric_through_the_metric_hook(zoo):
    r = llm_retention(zoo["int4"], zoo["fp32"], zoo["text"], settings=FAST,
                      metric="tests.llm_metric_fns:greedy_token_agreement")
    assert r.custom_value is not None and any(d is not None for d in r.first_divergence)
    assert r.retention == pytest.approx(r.custom_value)  # its value on the reference itself is 1.0
    assert r.custom_value < 1.0 and r.metric.endswith(":greedy_token_agreement")


def test_a_text_shorter_than_one_window_is_an_input_error(zoo, tmp_path):
    short = tmp_path / "short.txt"
    short.write_text("def f(): pass\n", encoding="utf-8")
    with pytest.raises(InputError, match="window"):
        llm_retention(zoo["int4"], zoo["fp32"], short, settings=FAST)


def test_cli_bad_eval_file_is_exit_2_with_one_line(zoo, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe\x00 not text")
    done = edgeopt_here("sweep", str(zoo["src"]), "--eval", str(bad))
    assert done.returncode == 2, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "not UTF-8" in lines[0] and str(bad) in lines[0]



@pytest.mark.slow
def test_openvino_genai_fp32_keeps_everything_and_int4_does_not(zoo):
    """(Two OpenVINO conversions: ~60 s on 2 busy cores.) The OpenVINO folders are scored from the compiled
    stateful IR (its logits; LLMPipeline has none), the reference in FP32 (inference_precision f32: this CPU would
    run it in BF16 by default)."""
    pytest.importorskip("openvino_genai", reason="the OpenVINO GenAI levels need openvino-genai")
    digest = model_digest(zoo["src"], "hf_llm")[0]
    fp32, _ = build_level(zoo_level("fp32", "openvino_genai"), zoo["src"], digest, zoo["sweep"] / "levels")
    int4, _ = build_level(zoo_level("int4-g32", "openvino_genai"), zoo["src"], digest, zoo["sweep"] / "levels")
    f32 = {"inference_precision": "f32"}
    same = llm_retention(fp32, fp32, zoo["text"], settings=FAST, reference_options=f32, candidate_options=f32)
    assert same.retention == 1.0 and same.kl_mean < 1e-9 and same.first_divergence == [None, None]
    ort = llm_retention(zoo["fp32"], zoo["fp32"], zoo["text"], settings=FAST)
    assert same.ppl_reference == pytest.approx(ort.ppl_reference, rel=1e-4)  # same weights, same tokens
    lossy = llm_retention(int4, fp32, zoo["text"], settings=FAST, reference_options=f32)
    assert lossy.top1_agreement < 1.0 and lossy.kl_mean > 1e-5


