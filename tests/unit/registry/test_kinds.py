"""Model kinds as data (issue 30): the two built-in kinds' declarations, and the one question commands dispatch on
(``model_kind``) instead of "is it a directory"."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from edgeopt.registry import BUILTIN_KINDS, format_kind, get_kind, kind_registry, runtimes_of_kind
from edgeopt.registry.kind_spec import GENERATIVE, TENSOR, KindDescriptor, MetricSpec
from edgeopt.registry.lookup import model_kind


def test_the_built_in_kinds_declare_command_metrics_ranking_and_gates():
    assert kind_registry().names()[:2] == [TENSOR, GENERATIVE]
    tensor, gen = get_kind(TENSOR), get_kind(GENERATIVE)
    assert (tensor.agent_command, tensor.rank_metric) == ("run", "latency_ms")
    assert (gen.agent_command, gen.rank_metric) == ("generate", "tpot_ms")
    assert "p99" in gen.metric("tpot_ms").percentiles and gen.metric("decode_tokens_per_s").higher_is_better
    assert "tpot_ms" in gen.gates and "tpot_ms" not in tensor.gates and "latency" in tensor.gates
    assert {r.name for r in runtimes_of_kind(GENERATIVE)} >= {"onnxruntime_genai", "openvino_genai"}
    assert format_kind("onnx").name == TENSOR and format_kind("hf_llm").name == GENERATIVE


def test_a_metric_says_why_a_value_cannot_be_a_measurement():
    tpot = get_kind(GENERATIVE).metric("tpot_ms")
    assert tpot.problem(1.5) is None
    for bad, why in ((0.0, "<= 0"), (-1.0, "<= 0"), (math.nan, "not finite"), (math.inf, "not finite"),
                     ("1", "not a number"), (True, "not a number")):
        assert why in (tpot.problem(bad) or ""), bad
    with pytest.raises(KeyError, match="no metric 'latency_ms'"):
        get_kind(GENERATIVE).metric("latency_ms")
    with pytest.raises(ValueError, match="rank_metric 'x'"):
        KindDescriptor(name="toy", summary="a toy kind", agent_command="run",
                       metrics=(MetricSpec(name="rtf", unit="ratio"),), rank_metric="x")


def test_commands_dispatch_on_the_models_kind_not_on_being_a_directory(tmp_path: Path):
    onnx = tmp_path / "m.onnx"
    onnx.write_bytes(b"\x08\x07")
    hf = tmp_path / "hf"
    hf.mkdir()
    (hf / "config.json").write_text("{}")
    empty = tmp_path / "empty"
    empty.mkdir()
    package = tmp_path / "m.mlpackage"  # a directory of the one-pass kind, told by its suffix
    package.mkdir()
    assert model_kind(onnx) == TENSOR and model_kind(tmp_path / "no-suffix") == TENSOR
    assert model_kind(hf) == GENERATIVE and model_kind(package) == TENSOR
    assert model_kind(empty) == GENERATIVE  # a folder no format claims: the folder formats' kind says what's missing


@pytest.mark.parametrize("kind", sorted(BUILTIN_KINDS))
def test_admits_agrees_with_problem_for_every_metric(kind: str) -> None:
    """The physics checks (metrics/physics.py, bench/llm/raw_check.py, profile/physics.py) call ``admits`` on each
    device value and ``bound_text`` in their reasons: both must say what ``problem`` says."""
    values = [0, 0.0, -0.0, 1e-9, 1, 2.0, 2.5, -1, float("nan"), float("inf"), -float("inf"), True, None, "1", 10**12]
    for metric in get_kind(kind).metrics:
        for value in values:
            assert metric.admits(value) is (metric.problem(value) is None), (metric.name, value)
        assert metric.bound_text.startswith("a finite number >")
