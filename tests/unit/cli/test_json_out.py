"""``--json``: stdout carries the JSON result alone, even when a library prints to stdout or to file descriptor 1."""

from __future__ import annotations

import json
import os
import sys

import pytest

from edgeopt.cli.json_out import emit_json, stdout_reserved_for_json


def test_fd_level_noise_goes_to_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    with stdout_reserved_for_json():
        print("python-level progress bar")
        sys.stdout.flush()
        os.write(1, b"C-level printf\n")
        emit_json({"ok": True})
    print("after")  # stdout is restored afterwards
    out, err = capfd.readouterr()
    assert json.loads(out.removesuffix("after\n")) == {"ok": True}
    assert out.endswith("after\n")
    assert "python-level progress bar" in err and "C-level printf" in err


def test_python_level_fallback_without_a_file_descriptor(capsys: pytest.CaptureFixture[str]) -> None:
    with stdout_reserved_for_json():
        print("progress")
        emit_json({"n": 1})
    out, err = capsys.readouterr()
    assert json.loads(out) == {"n": 1} and "progress" in err


def test_the_guard_is_released_on_error(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(RuntimeError), stdout_reserved_for_json():
        raise RuntimeError("boom")
    emit_json({"after": "error"})
    assert json.loads(capfd.readouterr().out) == {"after": "error"}
