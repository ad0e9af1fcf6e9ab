"""Progress on stderr: rich bars with ETA on a terminal, plain lines on a pipe; stdout stays for tables and JSON.

Everything long reports here: the agent's timed runs (:class:`StderrProgress`, a ``ProgressSink``), the passes'
calibration, conversion and fine-tuning steps (``edgeopt.cli.optimize_render.StderrReporter``) and the sweep's
levels and INT8 search trials. One :class:`ProgressView` draws them: on a terminal a live ``rich`` progress display
(description, bar, done/total, elapsed, ETA) that is always stopped, so the next message starts on its own line;
on a pipe a few plain lines per task. The last line of a timed run is the agent's final count, so it agrees with
the result's ``run.samples`` and ``run.timed_s``.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any, TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

# Plain mode: at most this many lines per task besides its first and last.
_PLAIN_LINES_PER_TASK = 4


class ProgressView:
    """Named tasks with a done count (and a total when known), drawn on ``stream``.

    Args:
        stream: where to draw (default: stderr).
        terminal: force terminal (True) or plain (False) mode; default: ``stream.isatty()``.
    """

    def __init__(self, stream: TextIO | None = None, *, terminal: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if terminal is None else terminal
        self._tasks: dict[str, TaskID] = {}
        self._plain_step: dict[str, int] = {}
        self._live: Progress | None = None

    # -- terminal mode ------------------------------------------------------------------------------------------
    def _progress(self) -> Progress:
        if self._live is None:
            console = Console(file=self.stream, force_terminal=True, highlight=False, soft_wrap=True)
            self._live = Progress(SpinnerColumn(), TextColumn("edgeopt: {task.description}"), BarColumn(),
                                  TaskProgressColumn(), TimeElapsedColumn(), TextColumn("ETA"),
                                  TimeRemainingColumn(), console=console, transient=False, refresh_per_second=8)
            self._live.start()
        return self._live

    def update(self, task: str, done: float, total: float | None, *, label: str | None = None) -> None:
        """Set ``task``'s progress (``total`` None: unknown, a counter without a bar)."""
        if not self.tty:
            self._plain(task, done, total, label)
            return
        progress = self._progress()
        if task not in self._tasks:
            self._tasks[task] = progress.add_task(label or task, total=total)
        progress.update(self._tasks[task], completed=done, total=total, description=label or task)

    def finish(self, task: str, text: str) -> None:
        """End ``task`` with its final line ``text`` (the numbers the result will show)."""
        if self.tty and task in self._tasks and self._live is not None:
            tid = self._tasks.pop(task)
            total = self._live.tasks[tid].total if tid in self._live.task_ids else None
            done = self._live.tasks[tid].completed if tid in self._live.task_ids else 0
            self._live.update(tid, completed=total if total is not None else done, description=text)
            self._live.stop_task(tid)
            if all(t.finished or not t.started for t in self._live.tasks):
                self.close()
            return
        self._plain_step.pop(task, None)
        self.line(f"edgeopt: {text}")

    def line(self, text: str) -> None:
        """A message on its own line (above the bars on a terminal)."""
        if self._live is not None:
            self._live.console.print(text, markup=False, highlight=False)
            return
        self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        """Stop the live display so whatever is written next starts on a fresh line."""
        if self._live is not None:
            self._live.stop()
            self._live = None
            self._tasks.clear()

    def __enter__(self) -> ProgressView:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- plain mode ---------------------------------------------------------------------------------------------
    def _plain(self, task: str, done: float, total: float | None, label: str | None) -> None:
        """A few lines per task on a pipe: the first update, every quarter of a known total, the last."""
        of = f"/{total:g}" if total else ""
        if task not in self._plain_step:
            self._plain_step[task] = 0
        elif total:
            quarter = int(done / total * _PLAIN_LINES_PER_TASK)
            if quarter <= self._plain_step[task] and done < total:
                return
            self._plain_step[task] = quarter
        self.line(f"edgeopt: {label or task} {done:g}{of}")


class StderrProgress:
    """A ``ProgressSink`` for agent events: phases as lines, the timed phase as a bar with ETA.

    The bar's fraction is the smaller of inferences done / requested and elapsed / ``min_duration_s`` (the run ends
    when both are reached, so the ETA follows the slower of the two). The agent's
    final event carries the true totals, which become the last line.
    """

    def __init__(self, stream: TextIO | None = None, *, terminal: bool | None = None) -> None:
        self.view = ProgressView(stream, terminal=terminal)
        self.tty = self.view.tty

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "phase" and event.get("phase") != "timed":
            self.view.line(f"edgeopt: {event.get('phase')}...")
        elif kind == "notice":  # a choice made for the user (the runtime the device has), said once
            self.view.line(f"edgeopt: note: {event.get('message')}")
        elif kind == "progress" and event.get("final"):
            elapsed = float(event.get("elapsed_s", 0.0))
            self.view.finish("timed", f"timed {event.get('done')} inferences in {elapsed:.2f} s")
        elif kind == "progress":
            self._timed(event)

    def _timed(self, event: dict[str, Any]) -> None:
        done, target = int(event.get("done", 0)), int(event.get("target") or 0)
        elapsed, min_s = float(event.get("elapsed_s", 0.0)), float(event.get("min_duration_s") or 0.0)
        label = f"timed {done} / >= {target} inferences" + (f", >= {min_s:g} s" if min_s else "")
        if not self.tty:
            self.view.line(f"edgeopt: {label}, {elapsed:.1f} s")
            return
        fraction = min(done / target if target else 1.0, elapsed / min_s if min_s else 1.0)
        self.view.update("timed", round(min(fraction, 0.999) * 1000), 1000, label=label)

    def close(self) -> None:
        """Stop the live display (call once the run is over, before printing the result)."""
        self.view.close()

    def __enter__(self) -> StderrProgress:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class SweepProgress:
    """A sweep's ``progress`` callback: levels and INT8 search trials as counters (bars when the trial budget is
    known), each finished level or trial as a line above them."""

    def __init__(self, stream: TextIO | None = None, *, terminal: bool | None = None,
                 max_trials: int | None = None) -> None:
        self.view = ProgressView(stream, terminal=terminal)
        self.max_trials = max_trials
        self._levels = 0
        self._trials = 0

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "level":
            self._levels += 1
            tag = " no change (= fp32)" if event.get("no_change") else ""
            tag += " (cached)" if event.get("cached") else ""
            ms = event.get("latency_ms")
            p50 = f"p50 {ms:.3f} ms" if ms is not None else "timed in the next interleaved rounds"
            self.view.line(f"  {event['recipe']:<14} {event['runtime']:<12} retention {event['retention']:.4f}  "
                           f"{p50}{tag}")
            self.view.update("levels", self._levels, None, label=f"sweep: {self._levels} level(s) measured")
        elif kind == "int8_trial":
            self._trials += 1
            self.view.line(f"  int8 search #{event['trial']} {event['label']}: retention {event['retention']:.4f} "
                           f"p50 {event['latency_ms']:.3f} ms")
            self.view.update("int8", self._trials, self.max_trials, label="INT8 search trials")
        elif kind == "level_timed":
            self.view.line(f"  {event['recipe']:<14} {event['runtime']:<12} p50 {event['latency_ms']:.3f} ms "
                           "(interleaved rounds)")
        elif kind == "warning":
            self.view.line(f"  warning: {event['message']}")
        elif kind == "info":
            self.view.line(f"  {event['message']}")

    def close(self) -> None:
        """Stop the live display before the result is printed."""
        self.view.close()

    def __enter__(self) -> SweepProgress:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
