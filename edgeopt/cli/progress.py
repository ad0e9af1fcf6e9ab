"""Progress of agent runs on stderr: a single updating line on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
from typing import Any, TextIO


class StderrProgress:
    """A ``ProgressSink`` that writes agent events to stderr; stdout stays clean for tables and JSON."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "phase":
            text = f"edgeopt: {event.get('phase')}..."
        elif kind == "progress":
            text = (f"edgeopt: timed {event.get('done')} / >= {event.get('target')} inferences, "
                    f"{event.get('elapsed_s')} s")
        else:
            return
        if self.tty:
            self.stream.write("\r\033[K" + text)
            if kind == "phase" and event.get("phase") == "timed":
                self.stream.write("\n")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
