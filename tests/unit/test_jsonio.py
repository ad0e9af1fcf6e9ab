"""edgeopt/jsonio.py: JSON from a file or a database row is refused past its size and depth limits with one line,
before any recursive parser sees it; brackets inside strings are text, not nesting."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from edgeopt import inbound, jsonio


def test_ordinary_json_reads_as_json_loads():
    text = json.dumps({"a": [1, {"b": "x[{]}\\\"["}], "c": None})
    assert jsonio.loads(text, max_bytes=1000) == json.loads(text)
    assert jsonio.loads(text.encode(), max_bytes=1000) == json.loads(text)


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"a":' * 100_000 + "1" + "}" * 100_000,
                                  "[" * 65 + "]" * 65, "[" * 200_000])
def test_nesting_past_the_limit_is_one_line(text):
    with pytest.raises(jsonio.JsonLimitError, match="^nested more than 64 levels deep$"):
        jsonio.loads(text, max_bytes=1 << 20)


def test_the_limit_itself_and_brackets_in_strings_pass():
    assert jsonio.loads("[" * 64 + "]" * 64, max_bytes=1000) is not None
    deep_looking = json.dumps(["[" * 1000, "{" * 1000, '\\"' + "[" * 100])
    assert len(jsonio.loads(deep_looking, max_bytes=1 << 20)) == 3


def test_size_is_checked_first():
    with pytest.raises(jsonio.JsonLimitError, match="^11 bytes, over the 10-byte limit$"):
        jsonio.loads('"123456789"', max_bytes=10)


def test_not_json_stays_a_json_decode_error():
    with pytest.raises(json.JSONDecodeError):
        jsonio.loads("{", max_bytes=10)


def test_read_refuses_what_is_not_a_regular_file_without_blocking(tmp_path: Path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)  # no writer: a blocking open would wait forever
    with pytest.raises(jsonio.JsonLimitError, match="not a regular file"):
        inbound.read_json(fifo, max_bytes=100)
    with pytest.raises(jsonio.JsonLimitError, match="not a regular file"):
        inbound.read_json(Path("/dev/zero"), max_bytes=100)


def test_read_checks_size_utf8_and_depth(tmp_path: Path):
    f = tmp_path / "x.json"
    f.write_bytes(b"\xef\xbb\xbf" + json.dumps({"k": "v"}).encode())
    assert inbound.read_json(f, max_bytes=100) == {"k": "v"}
    f.write_bytes(b'{"k": "\xff"}')
    with pytest.raises(jsonio.JsonLimitError, match=r"not UTF-8 text \(byte 0xff at offset 7\)"):
        inbound.read_json(f, max_bytes=100)
    f.write_text("[" * 5000 + "]" * 5000)
    with pytest.raises(jsonio.JsonLimitError, match="over the 100-byte limit"):
        inbound.read_json(f, max_bytes=100)
    with pytest.raises(jsonio.JsonLimitError, match="nested more than 8 levels"):
        inbound.read_json(f, max_bytes=100_000, max_depth=8)


def test_an_unterminated_string_of_escaped_quotes_is_one_pass():
    # Each escaped quote once restarted the string scan to the end of the text (quadratic: 40 KB took 17 s);
    # the scan now consumes an unterminated string whole, so 4 MB is one pass and an ordinary JSON error.
    with pytest.raises(json.JSONDecodeError):
        jsonio.loads('["' + '\\"' * 2_000_000, max_bytes=8 << 20)
