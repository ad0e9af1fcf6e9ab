"""A board is untrusted input: a lying agent of the tests' own (tests/fake_agent.py) behind the local runner.

The fake stands where the device's interpreter would be (``--python``), runs the real agent, and then lies in
what it returns. Everything else is real: the local runner's subprocess and pipes, the CLI, the history file.
The SSH cases (floods over a channel, result.json and eval outputs fetched over SFTP, a fleet qualify with one
lying device) are in tests/integration/ssh/test_untrusted_ssh.py. docs/reliability.md, "Untrusted device".
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from edgeopt.cli.main import main
from edgeopt.errors import RunnerError
from edgeopt.evaluation.device import device_outputs
from edgeopt.runners.local import LocalRunner
from edgeopt_agent.protocol import Request
from tests.conftest import make_matmul_model
from tests.fake_agent import fake_python

FAST = ["--iterations", "30", "--min-duration", "0.05", "--max-duration", "5", "--warmup", "2", "--no-energy",
        "--fps", "30"]
CONTROL = [chr(c) for c in (*range(0, 9), *range(11, 32), 0x7F, 0x9B)]


def _bench(model: Path, tmp_path: Path, mode: str, capsys, *extra: str) -> tuple[int, str, str]:
    code = main(["bench", str(model), "--python", str(fake_python(tmp_path, mode)), *FAST, *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


def _no_control(text: str) -> bool:
    return not any(c in text for c in CONTROL)


def test_injected_strings_are_data_on_the_terminal_and_in_json(matmul_model: Path, tmp_path: Path, capsys):
    code, out, err = _bench(matmul_model, tmp_path, "inject", capsys)
    assert code == 0, err
    # no escape reached the terminal; the rich link shows as text instead of becoming a clickable link
    assert _no_control(out) and _no_control(err), (out, err)
    assert "[link=https://evil.example]click[/link]" in out.replace("\n", "").replace(" ", "")
    code, out, err = _bench(matmul_model, tmp_path, "inject", capsys, "--json")
    result = json.loads(out)
    assert code == 0 and _no_control(result["runtime"]["version"]) and _no_control(result["environment"]["hostname"])
    assert "<script>" in result["runtime"]["version"]  # JSON keeps the text; only control characters are gone


def test_injected_error_text_is_one_clean_line(matmul_model: Path, tmp_path: Path, capsys):
    code, out, err = _bench(matmul_model, tmp_path, "error_inject", capsys)
    lines = [line for line in err.splitlines() if line.startswith("edgeopt: error:")]
    assert code == 3 and len(lines) == 1 and "runtime crashed" in lines[0], err
    assert _no_control(err) and "Traceback" not in err


@pytest.mark.parametrize("mode", ["nan", "negative", "zero", "too_many", "negative_wall", "nan_wall",
                                  "negative_memory", "nan_power"])
def test_impossible_numbers_make_an_invalid_run(matmul_model: Path, tmp_path: Path, capsys, mode: str):
    code, out, err = _bench(matmul_model, tmp_path, mode, capsys, "--json")
    result = json.loads(out)
    assert code == 1, err
    assert result["valid"] is False and result["fps_budget"]["passed"] is False, result["invalid_reasons"]
    assert any("the device reported" in r or "the device's samples" in r for r in result["invalid_reasons"])
    assert all(isinstance(v, (int, float)) for v in result["latency_ms"].values()), "no NaN (null) in the report"
    # the history keeps it, marked invalid
    assert main(["history", "--json", "--limit", "1"]) == 0
    (latest,) = json.loads(capsys.readouterr().out)
    assert latest["valid"] is False


def test_impossible_numbers_never_print_pass(matmul_model: Path, tmp_path: Path, capsys):
    code, out, err = _bench(matmul_model, tmp_path, "nan", capsys)
    assert code == 1 and "PASS" not in out and "FAIL: the run is invalid" in out.replace("\n", " ")


@pytest.mark.parametrize("mode", ["type_samples", "type_runtime", "type_wall", "type_version", "type_frames",
                                  "deep"])
def test_malformed_results_are_device_errors(matmul_model: Path, tmp_path: Path, capsys, mode: str):
    code, out, err = _bench(matmul_model, tmp_path, mode, capsys)
    lines = err.strip().splitlines()
    assert code == 3 and "Traceback" not in err, err
    assert lines[-1].startswith("edgeopt: error:") and "malformed result" in lines[-1], lines[-1]


@pytest.mark.parametrize(("mode", "channel"), [("stdout_flood", "stdout"), ("stderr_flood", "stderr")])
def test_a_flood_stops_the_agent_with_one_line(matmul_model: Path, tmp_path: Path, capsys, mode: str, channel: str):
    code, out, err = _bench(matmul_model, tmp_path, mode, capsys)
    assert code == 3 and f"flooded its {channel}" in err and "--max-duration" not in err, err
    assert len([line for line in err.splitlines() if line.startswith("edgeopt: error:")]) == 1


def test_a_malformed_profile_is_a_device_error(matmul_model: Path, tmp_path: Path, capsys):
    code = main(["profile", str(matmul_model), "--python", str(fake_python(tmp_path, "type_profile")), "-n", "5"])
    err = capsys.readouterr().err
    assert code == 3 and "malformed result (profile.layers.0.name" in err and "Traceback" not in err, err


@pytest.fixture()
def eval_npz(tmp_path: Path) -> Path:
    path = tmp_path / "eval.npz"
    np.savez(path, x=np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32))
    return path


@pytest.mark.parametrize(("mode", "needle"), [("eval_keys", "keys logits"), ("eval_header_bomb", "zip bomb"),
                                              ("eval_zip_bomb", "zip bomb")])
def test_hostile_eval_outputs_are_refused_before_loading(tmp_path: Path, eval_npz: Path, mode: str, needle: str):
    model = make_matmul_model(tmp_path / "m.onnx")
    runner = LocalRunner(python=str(fake_python(tmp_path, mode)))
    with pytest.raises(RunnerError, match="eval outputs that cannot be right") as info:
        device_outputs(model, eval_npz, runtime="onnxruntime", runner=runner)
    assert needle in str(info.value) and RunnerError.exit_code == 3


def test_a_local_eval_output_is_capped_while_it_is_written(tmp_path: Path, eval_npz: Path):
    """The agent writes the output straight into the host's temp dir: past its budget it is killed (1 GiB was
    written whole before, then refused), and nothing of it is left."""
    model = make_matmul_model(tmp_path / "m.onnx")
    runner = LocalRunner(python=str(fake_python(tmp_path, "eval_write_flood")))
    with pytest.raises(RunnerError, match="flooded its eval_outputs.npz"):
        device_outputs(model, eval_npz, runtime="onnxruntime", runner=runner)


def test_honest_eval_outputs_still_load(tmp_path: Path, eval_npz: Path):
    model = make_matmul_model(tmp_path / "m.onnx")
    outputs, names, raw = device_outputs(model, eval_npz, runtime="onnxruntime",
                                         runner=LocalRunner(python=str(fake_python(tmp_path, "same"))))
    assert len(outputs) == 1 and outputs[0].shape[0] == 4


@pytest.mark.parametrize(("mode", "needle"), [("profile_huge", "layers adding up to 571,000 ms per inference"),
                                              ("profile_negative", "median_us = -5.0"),
                                              ("profile_nan", "median_us = nan")])
def test_impossible_layer_times_make_an_invalid_profile(matmul_model: Path, tmp_path: Path, capsys, mode: str,
                                                        needle: str):
    report = tmp_path / "report"
    code = main(["profile", str(matmul_model), "--python", str(fake_python(tmp_path, mode)), "-n", "5", "--json",
                 "--report-dir", str(report)])
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert code == 1 and result["valid"] is False and "Traceback" not in err, err
    assert any(r.startswith("the device reported") and needle in r for r in result["invalid_reasons"]), result
    assert "INVALID: the device reported" in (report / "profile.html").read_text()


def test_injected_layer_names_are_text(matmul_model: Path, tmp_path: Path, capsys):
    report = tmp_path / "report"
    code = main(["profile", str(matmul_model), "--python", str(fake_python(tmp_path, "profile_inject")), "-n", "5",
                 "--report-dir", str(report)])
    out, err = capsys.readouterr()
    assert code == 0 and _no_control(out) and "[link=https://evil.example]click[/link]" in out, out
    page = (report / "profile.html").read_text()
    assert _no_control(page) and "<script" not in page and "<img" not in page


@pytest.mark.parametrize("mode", ["budget_ints", "samples_120mb", "devzero"])
def test_a_result_the_host_cannot_afford_is_refused_unparsed(tmp_path: Path, mode: str):
    """At the old 128 MiB budget a result of small integers took the host to 1.9 GB of RSS and 120 MB of samples
    was parsed whole: one is now refused by its count of values before parsing, the other two by the budget
    (docs/reliability.md, "Untrusted device: host cost")."""
    model = make_matmul_model(tmp_path / "m.onnx")
    runner = LocalRunner(python=str(fake_python(tmp_path, mode)))
    needle = "more than an agent's result holds" if mode == "budget_ints" else r"flooded its stdout \(the result\)"
    with pytest.raises(RunnerError, match=needle):
        runner.run(Request(model_path="", iterations=20, min_duration_s=0.05, warmup=2, max_duration_s=5.0), model)
