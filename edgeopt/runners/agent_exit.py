"""Saying what happened to an agent that ended without a result: the signal, how long it ran, in which phase.

The agent's first stderr event (``start``) carries its PID and the memory available at start; each later
``phase`` event names what it was doing. A runner feeds every event to :meth:`AgentTrace.observe` and, when no
result came back, asks :meth:`AgentTrace.no_result_message` for the one line to raise
(``agent killed by SIGKILL after 4.1 s in the timed loop; no result kept``).

Exit statuses: a local subprocess killed by a signal has a negative return code; over SSH the remote shell
reports ``128 + signal`` (the runner does not ``exec`` the agent, so the shell outlives it and reports).
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass, field
from typing import Any

# What each agent phase is called in messages.
PHASE_WORDS: dict[str, str] = {
    "start": "start-up", "lock_wait": "waiting for the device lock", "load": "loading the model",
    "idle": "the idle wait", "warmup": "the warm-up", "timed": "the timed loop", "evaluate": "the evaluation",
}
# An agent SIGKILLed while less than this share of memory (or this many MB) was free at start was probably
# killed by the kernel's OOM killer (its log is not readable without root, so this is a judgement).
LOW_MEMORY_SHARE = 0.10
LOW_MEMORY_MB = 256.0
# Agent exit statuses that are its own (not a signal): 124 watchdog, 125 host gone.
_AGENT_STATUSES = {124: "its watchdog ended it", 125: "it saw the host go away"}


def signal_of(status: int | None) -> int | None:
    """The signal number an exit status stands for (``-9`` locally, ``137`` from a shell), else None."""
    if status is None:
        return None
    if status < 0 and status != -1:
        return -status
    if 128 < status < 128 + 65:
        return status - 128
    return None


def signal_name(number: int) -> str:
    """``SIGKILL`` for 9; ``signal 42`` for a number without a name here."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


@dataclass
class AgentTrace:
    """What the agent said about itself on stderr, and when (host clock)."""

    started: float = field(default_factory=time.monotonic)
    phase: str = "start"
    phase_since: float | None = None
    pid: int | None = None
    memory_available_mb: float | None = None
    memory_total_mb: float | None = None
    events: int = 0

    def observe(self, event: dict[str, Any]) -> None:
        """Record one agent event (call it for every parsed stderr event)."""
        self.events += 1
        kind = event.get("event")
        if kind == "start":
            self.started = time.monotonic()
            self.pid = event.get("pid") if isinstance(event.get("pid"), int) else None
            self.memory_available_mb = _number(event.get("memory_available_mb"))
            self.memory_total_mb = _number(event.get("memory_total_mb"))
        elif kind == "phase" and isinstance(event.get("phase"), str) and event["phase"] != "upload":
            self.phase = event["phase"]
            self.phase_since = time.monotonic()

    @property
    def memory_was_low(self) -> bool:
        """True when the device had little memory available when the agent started."""
        free, total = self.memory_available_mb, self.memory_total_mb
        if free is None:
            return False
        return free < LOW_MEMORY_MB or (total is not None and total > 0 and free / total < LOW_MEMORY_SHARE)

    def where(self) -> str:
        return PHASE_WORDS.get(self.phase, f"the {self.phase} phase")

    def no_result_message(self, status: int | None, where: str, tail: str) -> str:
        """One line saying how the agent on ``where`` ended without a result, and what to do."""
        elapsed = time.monotonic() - self.started
        sig = signal_of(status)
        last = f"; its last output: {tail}" if tail else ""
        if sig is not None:
            what = f"the agent on {where} was killed by {signal_name(sig)} after {elapsed:.1f} s in {self.where()}"
            if sig == signal.SIGKILL and self.memory_was_low:
                free = f"{self.memory_available_mb:.0f} MB"
                return (f"{what}, probably out of memory (only {free} available at start); no result kept: "
                        f"free memory on the device or measure a smaller model{last}")
            if sig == signal.SIGILL:  # rerunning cannot help: a library was built for instructions this CPU lacks
                return (f"{what}: a runtime library ran an instruction this CPU or its OS does not allow, "
                        "typically one built for another CPU (-march=native elsewhere) or using a feature not enabled "
                        "here (a llama-cpp-python GGML_NATIVE=ON build ran AMX's tilezero on a KVM guest); no result "
                        f"kept: reinstall that runtime built for this CPU (edgeopt devices check lists them){last}")
            return f"{what}; no result kept: run again{last}"
        if status in _AGENT_STATUSES:
            return (f"the agent on {where} ended after {elapsed:.1f} s in {self.where()} ({_AGENT_STATUSES[status]}, "
                    f"exit {status}); no result kept: run again{last}")
        shown = "no exit status" if status in (None, -1) else f"exit {status}"
        return (f"the agent on {where} ended ({shown}) after {elapsed:.1f} s in {self.where()} without a result; "
                f"no result kept: check the agent's Python and runtimes there (edgeopt devices check){last}")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
