"""Device text is data: the sanitiser the runners and renderers share (edgeopt.untrusted), the npz header reader
(edgeopt.npz_headers) and the one schema of agent results (edgeopt.runners.agent_schema)."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from edgeopt.errors import RunnerError
from edgeopt.npz_headers import NpzHeaderError, members
from edgeopt.reports.junit import _clean
from edgeopt.runners.agent_schema import accept_result
from edgeopt.untrusted import (
    MAX_DEPTH,
    UntrustedDataError,
    clean_text,
    clean_tree,
    for_json,
    for_markdown,
    for_markdown_code,
    for_rich,
)
from tests.fake_agent import INJECT


def test_clean_text_removes_every_escape_and_control_character():
    text = clean_text(INJECT + "\x00\x07\x1b\x7f\u202e\ud800tab\there\nnew")
    assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in text), repr(text)
    assert "[2J" not in text and "PWNED-title" not in text and "tab here new" in text


def test_clean_text_bounds_the_length():
    assert clean_text("x" * 10_000).endswith("...(cut)") and len(clean_text("x" * 10_000)) < 2100


def test_clean_tree_cleans_keys_and_values_and_refuses_deep_nesting():
    assert clean_tree({"a\x1b[2J": ["v\x07", 1, None]}) == {"a": ["v", 1, None]}
    deep: object = []
    for _ in range(MAX_DEPTH + 2):
        deep = [deep]
    with pytest.raises(UntrustedDataError):
        clean_tree(deep)


def test_for_rich_shows_markup_as_text():
    console = Console(file=io.StringIO(), force_terminal=True, width=300, highlight=False)
    console.print("version " + for_rich(INJECT))
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert "[link=https://evil.example]" in out and "\x1b]8;" not in out and "PWNED-title" not in out


def test_for_markdown_escapes_html():
    text = for_markdown(INJECT)
    assert "<" not in text and ">" not in text and "&lt;script&gt;" in text


def test_junit_text_is_valid_xml():
    root = ET.Element("testsuite", {"name": INJECT})
    ET.SubElement(root, "error").text = INJECT
    _clean(root)
    ET.fromstring(ET.tostring(root, encoding="unicode"))


def _npz(path: Path, members_: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members_.items():
            zf.writestr(name, data)
    return path


def test_npz_headers_give_sizes_without_loading(tmp_path: Path):
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False, "shape": (4, 250_000_000)})
    (m,) = members(_npz(tmp_path / "bomb.npz", {"out0.npy": buf.getvalue() + b"\0" * 16}))
    assert m.key == "out0" and m.nbytes == 4_000_000_000 and m.stored_bytes < 200


def test_npz_headers_refuse_pickles_and_strangers(tmp_path: Path):
    obj = io.BytesIO()
    np.save(obj, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(NpzHeaderError, match="pickles"):
        members(_npz(tmp_path / "p.npz", {"out0.npy": obj.getvalue()}))
    with pytest.raises(NpzHeaderError, match="not an .npy"):
        members(_npz(tmp_path / "s.npz", {"evil.sh": b"rm -rf /"}))


@pytest.mark.parametrize("result", [
    {"status": "ok", "runtime": {"name": "x", "version": 1}},
    {"status": "ok", "runtime": {"name": "x", "version": "1"}, "samples_ns": [1, "2"]},
    {"status": "ok", "runtime": {"name": "x", "version": "1"}, "timed_inferences": 1.5},
    {"status": "ok", "runtime": {"name": "x", "version": "1"}, "memory_kb": {"peak": "lots"}},
    {"status": "ok", "runtime": {"name": "x", "version": "1"}, "truncated": "no"},
    {"status": "maybe"},
    {"status": "error", "error": ["list"]},
    [1, 2, 3],
])
def test_the_result_schema_refuses_wrong_types(result: object):
    with pytest.raises(RunnerError, match="malformed result"):
        accept_result(json.dumps(result), "dev")


def test_the_result_schema_lets_impossible_numbers_through_for_the_metrics():
    raw = accept_result(json.dumps({"status": "ok", "runtime": {"name": "x", "version": "1\x1b[2J"},
                                    "samples_ns": [float("nan"), -5]}), "dev")
    assert raw.runtime["version"] == "1" and len(raw.samples_ns) == 2


def test_for_json_escapes_c1_and_bidi_and_keeps_the_data():
    data = {"name": "a\x9b2J\u202eb\x7f", "n": [1, "\x85"]}
    text = for_json(json.dumps(data, ensure_ascii=False))
    assert not any(c in text for c in "\x9b\u202e\x7f\x85") and "\\u009b" in text
    assert json.loads(text) == data


def test_for_markdown_code_never_lets_a_backtick_close_the_span():
    assert for_markdown_code("board-1") == "`board-1`"
    shown = for_markdown_code("x` <script>alert(1)</script> `y\x1b[2J")
    assert "<script" not in shown and "`" not in shown.replace("&#96;", "") and "\x1b" not in shown
