"""The data-aware level ``int4-awq`` in the LLM sweep: tried only with calibration text, never on the eval text
(that would leak the held-out data into the score), and said so in one line when it is not tried."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt.errors import InputError
from edgeopt.llm.recipe import load_llm_recipe
from edgeopt.llm.sweep_build import check_calib, choose_levels
from edgeopt.llm.sweep_levels import AWQ, select_levels
from edgeopt.llm.sweep_options import LlmSweepOptions
from tests.cli_here import edgeopt_here

TEXT = "import json\nclass Path(object):\n    '''A path.'''\n    def name(self): return 1\n" * 10


def _keys(levels) -> set[str]:  # noqa: ANN001
    return {lv.key for lv in levels}


def test_awq_level_is_added_only_with_calibration_text_on_openvino_genai():
    both = ["onnxruntime_genai", "openvino_genai"]
    assert f"{AWQ}@openvino_genai" not in _keys(select_levels(None, both))
    with_calib = select_levels(None, both, calib=True)
    awq = next(lv for lv in with_calib if lv.name == AWQ)
    assert awq.runtime == "openvino_genai" and awq.settings == load_llm_recipe(AWQ)[0].block("openvino_genai")
    assert awq.settings.awq and awq.settings.scale_estimation  # the recipe's settings, not a copy
    assert not any(lv.name == AWQ for lv in select_levels(None, ["onnxruntime_genai"], calib=True))
    assert _keys(select_levels([AWQ], ["openvino_genai"], calib=True)) == {f"{AWQ}@openvino_genai",
                                                                          "fp32@openvino_genai"}


def test_naming_the_awq_level_without_calibration_text_is_an_input_error():
    with pytest.raises(InputError, match="--calib TEXT"):
        select_levels([AWQ], ["openvino_genai"])


def test_without_calib_the_sweep_says_in_one_line_that_awq_is_not_tried(tmp_path):
    said: list[str] = []
    opts = LlmSweepOptions(eval_text=tmp_path / "e.txt")
    choose_levels(opts, ["onnxruntime_genai", "openvino_genai"], said.append)
    assert len(said) == 1 and AWQ in said[0] and "--calib TEXT" in said[0]
    said.clear()
    choose_levels(opts, ["onnxruntime_genai"], said.append)  # no OpenVINO GenAI: nothing to say
    assert said == []


def test_calibration_text_that_is_the_eval_text_is_refused(tmp_path):
    eval_text, copy, calib = tmp_path / "eval.txt", tmp_path / "copy.txt", tmp_path / "calib.txt"
    eval_text.write_text(TEXT)
    copy.write_text(TEXT)
    calib.write_text(TEXT.replace("Path", "Name"))
    for same in (eval_text, copy, tmp_path / "." / "eval.txt"):  # the same file, or the same bytes
        with pytest.raises(InputError, match="held-out") as err:
            check_calib(eval_text, same)
        assert str(same) in str(err.value) and str(eval_text) in str(err.value)
    assert check_calib(eval_text, calib) == calib and check_calib(eval_text, None) is None
    short = tmp_path / "short.txt"
    short.write_text("tiny")
    with pytest.raises(InputError, match="characters of text"):
        check_calib(eval_text, short)


def test_cli_calib_same_as_eval_is_exit_2_with_one_line_naming_both(tmp_path):
    model = tmp_path / "llm"  # a folder: the LLM sweep; the calibration check comes before any build
    model.mkdir()
    text = tmp_path / "heldout.txt"
    text.write_text(TEXT)
    proc = edgeopt_here("sweep", str(model), "--eval", str(text), "--calib", str(text), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].count(str(text)) == 2 and "Traceback" not in proc.stderr
    assert not Path(tmp_path / "o" / "levels").exists()
