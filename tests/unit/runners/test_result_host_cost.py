"""What a result may cost the host before it is parsed (docs/reliability.md, "Untrusted device: host cost"): a budget
sized to what an honest run can send, values counted in the text before any Python object is made for them, ASCII
only, and no needless copies of 2 M samples."""

from __future__ import annotations

import json

import pytest

from edgeopt.errors import RunnerError
from edgeopt.runners.agent_schema import accept_result, result_text
from edgeopt.runners.limits import MIB, RESULT_MAX_BYTES, RESULT_MAX_VALUES
from edgeopt.untrusted import clean_tree
from edgeopt_agent.paced import paced_loop
from edgeopt_agent.protocol import MAX_FRAMES, MAX_SAMPLES, PROTOCOL_VERSION


def _result(samples: str) -> str:
    head = {"status": "ok", "runtime": {"name": "null", "version": "1"}, "timed_wall_s": 30.0,
            "protocol_version": PROTOCOL_VERSION, "samples_ns": "@"}
    return json.dumps(head).replace('"@"', f"[{samples}]") + "\n"


def test_the_budget_holds_what_an_honest_run_sends_and_no_more():
    """128 MiB of small integers cost the host 1.9 GB of RSS; the budget is now the kept samples at their longest."""
    honest = _result(", ".join(["1234567890123456"] * 1000))  # 16 digits: 115 days in ns
    per_sample = (len(honest) - len(_result(""))) / 1000
    assert MAX_SAMPLES * per_sample < RESULT_MAX_BYTES <= 48 * MIB


def test_a_result_of_more_values_than_a_result_holds_is_refused_before_parsing():
    text = _result(",".join(["1000"] * (RESULT_MAX_VALUES + 1)))
    needle = r"malformed result \(up to [\d,]+ values, more than an agent's result holds"
    with pytest.raises(RunnerError, match=needle) as err:
        accept_result(text, "board")
    assert "\n" not in str(err.value) and "it was not parsed" in str(err.value)


def test_commas_inside_strings_are_not_counted_as_values():
    """An honest result whose text holds more commas than values (a long error or layer name) is parsed; the
    count used to take every comma for a value and refuse it."""
    text = _result("1, 2").replace('"version": "1"', '"version": "' + "," * (RESULT_MAX_VALUES + 10) + '"')
    raw = accept_result(text, "board")
    assert raw.ok and raw.samples_ns == [1, 2] and raw.runtime["version"].startswith(",,,")  # cut by the sanitiser


@pytest.mark.parametrize("body", ["{}", "[]", '"ab"'])
def test_many_containers_or_strings_are_refused_before_parsing(body: str):
    with pytest.raises(RunnerError, match="more than an agent's result holds"):
        accept_result(_result(",".join([body] * (RESULT_MAX_VALUES // 2))), "board")


def test_an_honest_result_at_the_sample_ceiling_is_accepted():
    raw = accept_result(_result(", ".join(str(1_000_000 + i % 1000) for i in range(MAX_SAMPLES))), "board")
    assert len(raw.samples_ns) == MAX_SAMPLES and raw.ok


def test_a_result_that_is_not_ascii_is_refused():
    """One character past Latin-1 made Python hold the whole text at 4 bytes a character."""
    with pytest.raises(RunnerError, match="not ASCII JSON"):
        result_text(_result("1").replace("null", "n\U0001f600ll").encode(), "board")
    assert result_text(bytearray(_result("1").encode()), "board") == _result("1")


def test_the_result_is_read_from_its_last_line_without_blank_tails():
    raw = accept_result("noise printed first\n" + _result("5, 6") + "\n\n", "board")
    assert raw.samples_ns == [5, 6]
    with pytest.raises(RunnerError, match="blank characters"):
        accept_result(_result("1") + " " * 10_000, "board")
    with pytest.raises(RunnerError, match="not JSON"):
        accept_result(_result("1").rstrip() + " trailing", "board")


def test_a_list_of_numbers_is_not_copied_when_cleaned():
    samples = list(range(1000, 2000))
    assert clean_tree({"samples_ns": samples})["samples_ns"] is samples
    assert clean_tree(["a\x1b[2Jb", 1]) == ["ab", 1]


def test_a_paced_run_keeps_no_more_numbers_than_a_back_to_back_one():
    """Each frame keeps its latency and its response time: a paced run ends at MAX_FRAMES frames."""
    samples, truncated, frames = paced_loop(lambda: None, 1e9, 10**9, 2**62, 2**62, None, 0)
    assert len(samples) == len(frames["response_ns"]) == MAX_FRAMES and not truncated
    assert len(samples) + len(frames["response_ns"]) <= MAX_SAMPLES
