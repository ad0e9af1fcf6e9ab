"""Spec loading: profiles merged key by key, and every error names the file, the line and the key."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from edgeopt.qualify import QualifySpecError, load_spec, profile_names
from edgeopt.qualify.gate_spec import GATE_KINDS
from edgeopt.qualify.loader import PROFILES_DIR


def write(tmp_path: Path, text: str, name: str = "spec.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


BASE = """
name: demo
model: {zoo: mobilenet-tiny}
"""


def error_of(path: Path) -> str:
    with pytest.raises(QualifySpecError) as info:
        load_spec(path)
    return str(info.value)


def test_shipped_profiles_hold_the_documented_thresholds(tmp_path):
    assert profile_names() == ["cloud-service", "edge-iot", "llm-interactive", "llm-server", "mobile-app", "real-time"]
    expected = {
        "mobile-app": {"latency": {"percentile": "p99", "max_ms": 100}, "model_size": {"max_mb": 50},
                       "memory": {"max_mb": 100, "basis": "model"}},
        "edge-iot": {"model_size": {"max_mb": 10}, "memory": {"max_mb": 50, "basis": "model"}},
        "real-time": {"latency": {"percentile": "p99", "max_ms": 50},
                      "deadline_miss": {"fps": 30, "max_pct": 0.1, "frames": None}},
        "cloud-service": {"latency": {"percentile": "p99", "max_ms": 200}},
        "llm-server": {"ttft_ms": {"percentile": "p99", "max_ms": 2000},
                       "tpot_ms": {"percentile": "p99", "max_ms": 100}},
        "llm-interactive": {"ttft_ms": {"percentile": "p99", "max_ms": 500},
                            "tpot_ms": {"percentile": "p99", "max_ms": 30}},
    }
    for name, gates in expected.items():
        base = BASE.replace("mobilenet-tiny", "tiny-llama") if name.startswith("llm-") else BASE
        spec = load_spec(write(tmp_path, base + f"extends: {name}\n", f"{name}.yaml")).spec
        got = {k: v for k, v in spec.gates.model_dump().items() if v is not None}
        assert got == gates, name
        assert (PROFILES_DIR / f"{name}.yaml").is_file()


def test_extends_merges_key_by_key_and_null_removes_a_gate(tmp_path):
    spec = load_spec(write(tmp_path, BASE + textwrap.dedent("""
        extends: [mobile-app, real-time]
        gates:
          latency: {max_ms: 20}
          memory: null
          throughput: {min_ips: 10}
    """))).spec
    assert spec.extends == ["mobile-app", "real-time"]
    assert spec.gates.latency.max_ms == 20 and spec.gates.latency.percentile == "p99"  # p99 from the profile
    assert spec.gates.memory is None and spec.gates.model_size.max_mb == 50
    assert spec.gates.deadline_miss.fps == 30 and spec.gates.throughput.min_ips == 10
    assert spec.gates.active() == ["latency", "deadline_miss", "model_size", "throughput"]


def test_defaults_and_percentile_normalisation(tmp_path):
    loaded = load_spec(write(tmp_path, BASE + "gates:\n  latency: {percentile: '99.9', max_ms: 5}\n"))
    spec = loaded.spec
    assert spec.gates.latency.percentile == "p999"
    assert [t.label() for t in spec.targets] == ["local"] and spec.measure.min_duration_s == 2.0
    assert spec.costs.carbon_g_per_kwh == 450 and len(loaded.sha256) == 64 and loaded.profiles == []


@pytest.mark.parametrize(("body", "line", "key", "words"), [
    ("gates:\n  latency: {max_ms: 5}\nmeasure:\n  iteratons: 5\n", 6, "measure.iteratons",
     "did you mean 'iterations'"),
    ("gates:\n  latency:\n    percentile: p99\n    max_ms: -1\n", 6, "gates.latency.max_ms", "greater than 0"),
    ("gates:\n  latency: {percentile: p42, max_ms: 1}\n", 4, "gates.latency.percentile", "p42"),
    ("gates:\n  latncy: {max_ms: 1}\n", 4, "gates.latncy", "did you mean 'latency'"),
    ("gates:\n  fps: {percentile: p99}\n", 4, "gates.fps.fps", "required key is missing"),
    ("extends: mobile-ap\n", 3, "extends.0", "did you mean 'mobile-app'"),
    ("gates:\n  latency: {max_ms: 1}\ntargets:\n  - {device: a, host: b@c}\n", 6, "targets.0",
     "'device' or 'host'"),
])
def test_errors_name_file_line_and_key(tmp_path, body, line, key, words):
    path = write(tmp_path, BASE + body)
    message = error_of(path)
    assert message.startswith(f"{path}:{line}: {key}: "), message
    assert words in message


def test_a_bad_value_from_a_profile_file_points_into_the_profile(tmp_path):
    write(tmp_path, """
        name: team
        description: our team's gates
        gates:
          memory: {max_mb: 64}
          latency: {percentile: p99, max_ms: zero}
    """, "team.yaml")
    path = write(tmp_path, BASE + "extends: team.yaml\n")
    assert error_of(path).startswith(f"{tmp_path / 'team.yaml'}:5: gates.latency.max_ms: ")
    # the spec overriding that key fixes it: the blame follows the key
    fixed = write(tmp_path, BASE + "extends: team.yaml\ngates:\n  latency: {max_ms: 3}\n", "fixed.yaml")
    assert load_spec(fixed).spec.gates.latency.max_ms == 3


def test_cross_field_and_file_checks(tmp_path):
    cases = {
        "gates: {}\n": ("gates", "no gates"),
        "recipe: int8\noptimized: x.onnx\ngates:\n  latency: {max_ms: 1}\n": ("optimized", "not both"),
        "gates:\n  retention: {min_ratio: 0.99}\n": ("gates.retention", "add 'recipe' or 'optimized'"),
        "gates:\n  deadline_miss: {fps: 30, max_pct: 1}\nmeasure: {streams: 2}\n": ("measure.streams", "streams"),
        "eval: {data: missing.npz}\ngates:\n  latency: {max_ms: 1}\n": ("eval.data", "not found"),
        "targets:\n  - {target: local}\n  - {target: local}\ngates:\n  latency: {max_ms: 1}\n":
            ("targets.1", "distinct 'name'"),
    }
    for i, (body, (key, words)) in enumerate(cases.items()):
        path = write(tmp_path, BASE + body, f"s{i}.yaml")
        message = error_of(path)
        assert f": {key}: " in message and words in message and message.startswith(str(path)), message
    bad_zoo = write(tmp_path, "name: x\nmodel: {zoo: mobilenet-smal}\ngates: {latency: {max_ms: 1}}\n", "z.yaml")
    assert "did you mean 'mobilenet-small'" in error_of(bad_zoo) and f"{bad_zoo}:2: model.zoo" in error_of(bad_zoo)


def test_unreadable_and_malformed_files(tmp_path):
    assert "not found" in error_of(tmp_path / "nope.yaml")
    broken = write(tmp_path, "name: x\nmodel: [unclosed\n")
    assert error_of(broken).startswith(f"{broken}:") and "YAML syntax error" in error_of(broken)
    assert "YAML mapping" in error_of(write(tmp_path, "- a list\n", "list.yaml"))
    both = write(tmp_path, "name: x\nmodel: {zoo: mobilenet-tiny, path: m.onnx}\ngates: {latency: {max_ms: 1}}\n",
                 "both.yaml")
    assert "exactly one of 'path' or 'zoo'" in error_of(both)


def test_relative_paths_resolve_from_the_spec_file(tmp_path, matmul_model):
    sub = tmp_path / "specs"
    sub.mkdir()
    (sub / "m.onnx").write_bytes(matmul_model.read_bytes())
    loaded = load_spec(write(sub, "name: x\nmodel: {path: m.onnx}\ngates: {model_size: {max_mb: 1}}\n"))
    assert loaded.resolve(loaded.spec.model.path) == sub / "m.onnx"


def test_every_gate_kind_is_documented():
    doc = (Path(__file__).resolve().parents[3] / "docs" / "qualify.md").read_text()
    for kind in GATE_KINDS:
        assert f"`{kind}`" in doc, kind
