"""The one helper that turns an exception into the cause named in a one-line error message."""

from __future__ import annotations

from edgeopt.errors import first_line


def test_first_line_takes_the_first_line_and_cuts_it() -> None:
    exc = RuntimeError("  bad node 'conv1'\n  Traceback (most recent call last):\n  ...")
    assert first_line(exc) == "bad node 'conv1'"
    assert first_line(ValueError("x" * 500)) == "x" * 300
    assert first_line(ValueError("x" * 500), limit=None) == "x" * 500


def test_an_empty_message_falls_back_to_the_type_or_the_given_text() -> None:
    assert first_line(KeyError()) == "KeyError"
    assert first_line(ValueError("  \n "), fallback="invalid model") == "invalid model"
