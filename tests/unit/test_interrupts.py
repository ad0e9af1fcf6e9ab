"""The interrupt hooks the CLI's SIGINT/SIGTERM handlers run (an SSH upload closes its link and then raises the
interrupt itself, instead of a KeyboardInterrupt landing anywhere inside paramiko)."""

from __future__ import annotations

import signal

import pytest

from edgeopt import interrupts


@pytest.fixture(autouse=True)
def _clean():
    interrupts.reset()
    yield
    interrupts.reset()


def test_first_signal_runs_the_hooks_and_the_block_raises_the_interrupt_itself():
    calls: list[str] = []
    closes = interrupts.stop_on_interrupt(lambda: calls.append("closed"))
    fails = interrupts.stop_on_interrupt(lambda: 1 / 0)  # a failing hook does not stop the others
    with pytest.raises(KeyboardInterrupt), closes, fails:
        assert interrupts.interrupt(signal.SIGINT) is True  # the handler must not raise: the block will
        assert calls == ["closed"]
        assert interrupts.interrupt(signal.SIGINT) is False  # a second Ctrl-C raises at once
    assert interrupts.requested() == signal.SIGINT


def test_an_error_the_hook_caused_becomes_the_interrupt():
    with pytest.raises(interrupts.Terminated), interrupts.stop_on_interrupt(lambda: None):
        interrupts.interrupt(signal.SIGTERM)
        raise EOFError("Server connection dropped")  # what paramiko raises on the closed link


def test_no_hook_no_deferral_and_no_interrupt_no_change():
    with interrupts.stop_on_interrupt(lambda: None):
        pass  # nothing requested: the block ends normally
    with pytest.raises(ValueError), interrupts.stop_on_interrupt(lambda: None):
        raise ValueError("a real error stays itself")
    assert interrupts.interrupt(signal.SIGINT) is False  # no block running: the handler raises
    assert isinstance(interrupts.interrupt_error(), KeyboardInterrupt)
