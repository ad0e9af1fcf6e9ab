"""A qualification spec is data (issue 31, docs/reliability.md "Untrusted files"): ``extends`` reads only gate-profile
files and never quotes one that is not a profile, and every numeric setting is finite and bounded (exit 2 naming
the key, where ``max_duration_s: .inf`` was an internal OverflowError reported as exit 3)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from edgeopt.cli.main import main
from edgeopt.qualify import QualifySpecError, load_spec
from edgeopt.settings import MAX_DURATION_S, MAX_ITERATIONS

SECRET = "hunter2-SECRETHASH"
BASE = """
name: demo
model: {zoo: mobilenet-tiny}
gates: {model_size: {max_mb: 50}}
"""


def _spec(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(BASE).lstrip() + textwrap.dedent(text).lstrip())
    return path


def _error(path: Path) -> str:
    with pytest.raises(QualifySpecError) as info:
        load_spec(path)
    text = str(info.value)
    assert "\n" not in text
    return text


def test_extends_never_reads_a_file_that_is_not_a_profile_file(tmp_path):
    shadow = tmp_path / "etc" / "shadow"
    shadow.parent.mkdir()
    shadow.write_text(f"root:$6${SECRET}:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n")
    depth = "../" * len(tmp_path.parts)
    text = _error(_spec(tmp_path / "etc", f"extends: [{depth}{str(shadow).lstrip('/')}]\n"))
    assert "is not a gate profile" in text and "ending .yaml or .yml" in text
    assert SECRET not in text and "daemon" not in text and "root:" not in text


@pytest.mark.parametrize(("content", "needle"), [
    (f"root: x\n{SECRET}: 1\n", "unknown top-level key"),
    (f"password: {SECRET}\n", "unknown top-level key"),
    (f"gates:\n  latency: {{max_ms: {SECRET}}}\n", "gates.latency.max_ms"),
    (f"gates:\n  latency: {{max_ms: 5, {SECRET}: 1}}\n", "gates.latency: unknown key"),
    (f"gates:\n  {SECRET}: {{max_ms: 5}}\n", "gates: unknown gate"),
    (f"gates: [\n  {SECRET}\n", "YAML syntax error"),
    (f"- {SECRET}\n", "not a YAML mapping"),
])
def test_a_yaml_file_that_is_not_a_profile_is_never_quoted(tmp_path, content, needle):
    (tmp_path / "secrets.yaml").write_text(content)
    text = _error(_spec(tmp_path, "extends: [secrets.yaml]\n"))
    assert needle in text and str(tmp_path / "secrets.yaml") in text and SECRET not in text, text


def test_a_profile_of_your_own_still_applies(tmp_path):
    (tmp_path / "mine.yaml").write_text("name: mine\ngates:\n  latency: {percentile: p99, max_ms: 20}\n")
    loaded = load_spec(_spec(tmp_path, "extends: [mine.yaml, edge-iot]\n"))
    assert loaded.spec.gates.latency is not None and loaded.spec.gates.latency.max_ms == 20
    assert loaded.spec.gates.model_size is not None and loaded.spec.gates.model_size.max_mb == 50


def test_a_recipe_path_must_be_a_recipe_file(tmp_path):
    text = _error(_spec(tmp_path, "recipe: ../../etc/shadow\n"))
    assert "recipe: '../../etc/shadow' is not a recipe" in text


@pytest.mark.parametrize(("measure", "key", "words"), [
    ("max_duration_s: .inf", "measure.max_duration_s", "finite number"),
    ("min_duration_s: .nan", "measure.min_duration_s", "finite number"),
    ("iterations: 1.0e+30", "measure.iterations", ""),
    (f"iterations: {MAX_ITERATIONS + 1}", "measure.iterations", f"less than or equal to {MAX_ITERATIONS}"),
    (f"max_duration_s: {MAX_DURATION_S * 2}", "measure.max_duration_s", "less than or equal to 86400"),
    ("streams: 100000", "measure.streams", "less than or equal to 1024"),
    ("seed: 100000000000000000000000", "measure.seed", "less than or equal to"),
    ("seed: -1", "measure.seed", "greater than or equal to 0"),
])
def test_numeric_measure_settings_are_bounded_naming_the_key(tmp_path, capsys, measure, key, words):
    spec = _spec(tmp_path, f"measure: {{{measure}}}\n")
    text = _error(spec)
    assert f"spec.yaml:4: {key}:" in text and words in text, text
    assert main(["qualify", str(spec)]) == 2
    err = capsys.readouterr().err
    assert key in err and "Traceback" not in err and "OverflowError" not in err


def test_a_miss_rate_needing_more_frames_than_a_run_may_ask_for_is_refused(tmp_path):
    spec = _spec(tmp_path, "extends: [real-time]\nmeasure: {streams: 1}\n")
    text = spec.read_text().replace("extends: [real-time]", "gates:\n  deadline_miss: {fps: 30, max_pct: 1.0e-9}")
    spec.write_text(text.replace("gates: {model_size: {max_mb: 50}}\n", ""))
    assert "gates.deadline_miss.max_pct: 1e-09 % needs" in _error(spec)
    spec.write_text(text.replace("fps: 30,", "fps: .inf,").replace("gates: {model_size: {max_mb: 50}}\n", ""))
    assert "gates.deadline_miss.fps: Input should be a finite number" in _error(spec)
