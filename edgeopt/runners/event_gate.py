"""Progress events from an agent, passed on at a bounded rate and the rest counted.

A board is untrusted (docs/reliability.md, "Untrusted device: transport"): its agent may print a progress event on
every stderr line. Echoed line by line, 200,000 of them held the terminal for minutes and the run ended "Socket
is closed". An honest agent sends a handful of phase events and one progress event per ``progress_interval_s``
(1 s by default), so :class:`EventGate` passes bursts of up to :data:`EVENT_BURST` events and then
:data:`EVENTS_PER_S` a second; the others are counted, and :meth:`EventGate.close` says how many in one ``notice``
event. The run's own bookkeeping (:class:`~edgeopt.runners.agent_exit.AgentTrace`) still sees every event.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

# Events passed at once (an honest start: start, lock, load, warm-up, timed, a few notices), then per second.
EVENT_BURST = 50
EVENTS_PER_S = 20.0


class EventGate:
    """A progress sink in front of ``sink``: at most :data:`EVENT_BURST` events at once, :data:`EVENTS_PER_S` a
    second after that (a token bucket); the rest are dropped and counted.

    Args:
        sink: where the passed events go (None: nowhere; the count is still kept).
        where: the agent's place for the summary (``local``, ``ssh:user@host:port``).
        clock: seconds, monotonic (tests pass their own).

    Attributes:
        dropped: events not passed on so far.
    """

    def __init__(self, sink: Callable[[dict[str, Any]], None] | None, where: str, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.sink, self.where, self.clock = sink, where, clock
        self.dropped = 0
        self._tokens = float(EVENT_BURST)
        self._at = clock()

    def __call__(self, event: dict[str, Any]) -> None:
        now = self.clock()
        self._tokens = min(float(EVENT_BURST), self._tokens + (now - self._at) * EVENTS_PER_S)
        self._at = now
        if self._tokens < 1.0:
            self.dropped += 1
            return
        self._tokens -= 1.0
        if self.sink is not None:
            self.sink(event)

    def close(self) -> None:
        """One ``notice`` event with the number of events dropped, when any was (then the count starts again)."""
        if not self.dropped:
            return
        count, self.dropped = self.dropped, 0
        if self.sink is not None:
            self.sink({"event": "notice", "message": (
                f"the agent on {self.where} sent {count:,} more progress events than the {EVENTS_PER_S:g} a second "
                "shown; they were counted, not shown (an honest agent sends about one a second: check the "
                "device's agent if this repeats)")})
