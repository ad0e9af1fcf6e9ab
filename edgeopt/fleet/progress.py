"""Live progress of a fleet run on stderr: one line per device, never interleaved noise.

On a terminal a ``rich.live.Live`` table redraws one line per device (state, phase, timed inferences, result);
otherwise (CI logs, pipes) one plain line is printed per state or phase change, prefixed with the device name,
and progress ticks are dropped. Events arrive from worker threads: every update holds a lock.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from typing import Any, TextIO

from .result import DeviceOutcome, FleetRow


class FleetProgress:
    """Receives ``(device, event)`` from the executors; use as a context manager around the run.

    Args:
        devices: device names in display order (others are added as their first event arrives).
        stream: where to write (default stderr).
        live: force the live table (True) or plain lines (False); None: live when ``stream`` is a terminal.
    """

    def __init__(self, devices: Sequence[str] = (), stream: TextIO | None = None, live: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self._lock = threading.Lock()
        self._state = {name: "queued" for name in devices}
        self._detail = dict.fromkeys(devices, "")
        self._live: Any = None

    def __enter__(self) -> FleetProgress:
        if self.live:
            from rich.console import Console
            from rich.live import Live

            self._live = Live(self._table(), console=Console(file=self.stream), refresh_per_second=4,
                              transient=False)
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            with self._lock:
                self._live.update(self._table())
            self._live.stop()
            self._live = None

    def __call__(self, device: str, event: dict[str, Any]) -> None:
        kind = event.get("event")
        with self._lock:
            if device not in self._state:
                self._state[device], self._detail[device] = "queued", ""
            if kind == "state":
                self._state[device] = str(event.get("state"))
                self._detail[device] = str(event.get("detail", ""))
                changed = True
            elif kind == "phase":
                changed = self._detail[device] != str(event.get("phase"))
                self._detail[device] = str(event.get("phase"))
            elif kind == "progress":
                self._detail[device] = (f"timed {event.get('done')}/{event.get('target')} inferences, "
                                        f"{event.get('elapsed_s')} s")
                changed = False
            else:
                return
            if self._live is not None:
                self._live.update(self._table())
            elif changed:
                detail = self._detail[device]
                self.stream.write(f"edgeopt: {device}: {self._state[device]}{': ' + detail if detail else ''}\n")
                self.stream.flush()

    def _table(self) -> Any:
        from rich.table import Table
        from rich.text import Text

        table = Table(box=None, show_header=False, pad_edge=False)
        for col in ("device", "state", "detail"):
            table.add_column(col, no_wrap=col != "detail", overflow="ellipsis")
        colour = {"done": "green", "error": "red", "running": "cyan", "queued": "dim"}
        for name, state in self._state.items():
            table.add_row(Text(name), Text(state, style=colour.get(state, "")), Text(self._detail[name]))
        return table


def done_event(row: DeviceOutcome) -> dict[str, Any]:
    """The final ``state`` event of a device, from its row."""
    if row.status == "error":
        return {"event": "state", "state": "error", "detail": f"{row.error_kind}: {row.error}"}
    detail = f"{row.seconds:.1f} s"
    if isinstance(row, FleetRow) and row.result is not None:
        lat = row.result.latency_ms
        verdict = "pass" if row.result.passed else "FAIL"
        detail = f"{verdict}, p50 {lat.p50:.3f} ms, p99 {lat.p99:.3f} ms, {row.seconds:.1f} s"
    return {"event": "state", "state": "done", "detail": detail}
