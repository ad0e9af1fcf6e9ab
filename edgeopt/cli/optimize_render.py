"""Tables for ``edgeopt optimize`` and ``edgeopt recipes``, and the stderr progress of passes.

JSON output never passes through here; stdout carries only tables (or JSON), progress and warnings go to stderr.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table

from ..optimize import OptimizeResult
from .progress import ProgressView

_out = Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 160)


class StderrReporter:
    """A pass ``Reporter``: steps and warnings as lines, calibration / conversion / fine-tuning as bars with ETA on
    a terminal (a few plain lines per task on a pipe); see :mod:`edgeopt.cli.progress`."""

    def __init__(self, stream: TextIO | None = None, *, terminal: bool | None = None) -> None:
        self.view = ProgressView(stream, terminal=terminal)
        self.tty = self.view.tty

    def info(self, message: str) -> None:
        self.view.line(f"edgeopt: {message}")

    def warn(self, message: str) -> None:
        self.view.line(f"edgeopt: WARNING: {message}")

    def progress(self, task: str, done: int, total: int | None) -> None:
        self.view.update(task, done, total)
        if total and done >= total:
            self.view.finish(task, f"{task} {done}/{total}")

    def close(self) -> None:
        """Stop the live display before the result is printed."""
        self.view.close()


def _n(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def render_optimize(r: OptimizeResult) -> None:
    rows = {row.artifact: row for row in r.fidelity or []}
    table = Table(title=f"optimize {r.model.path} for {r.target} with recipe {r.recipe} -> {r.out_dir}")
    for col in (
        "artifact",
        "pass",
        "precision",
        "size",
        "size ratio",
        "max |err|",
        "cosine",
        "top-1 agree",
        "accuracy",
        "p50 ms",
        "speedup",
        "pass s",
    ):
        table.add_column(col, justify="left" if col in ("artifact", "pass", "precision") else "right")
    for art in [r.model, *r.artifacts]:
        row = rows.get(art.name)
        table.add_row(
            art.name,
            art.pass_name or "-",
            art.precision.value,
            f"{art.size_bytes:,}",
            _n(row.size_ratio if row else None, ".3f"),
            _n(row.max_abs_error if row else None, ".4g"),
            _n(row.cosine_similarity if row else None, ".5f"),
            _n(row.top1_agreement if row else None, ".1%"),
            _n(row.accuracy if row else None, ".2%"),
            _n(row.latency_ms_p50 if row else None, ".3f"),
            _n(row.speedup if row else None, ".2f") + ("x" if row and row.speedup else ""),
            _n(art.seconds, ".2f") if art.pass_name else "-",
        )
    _out.print(table)
    data = next((row.data for row in r.fidelity or []), None)
    if data:
        _out.print(f"fidelity on {rows[r.model.name].samples} {data} samples; manifest: {r.manifest_path}")
    for art in r.artifacts:
        for note in rows[art.name].notes if art.name in rows else []:
            _out.print(f"note: {art.name}: {note}", soft_wrap=True)
    for w in r.warnings:
        _out.print(f"[yellow]warning:[/yellow] {w}", soft_wrap=True)


def render_recipes(items: list[dict[str, Any]]) -> None:
    table = Table(title="edgeopt recipes")
    for col in ("name", "passes", "description", "status"):
        table.add_column(col)
    for item in items:
        table.add_row(item["name"], " -> ".join(item["passes"]), item["description"], item["status"])
    _out.print(table)


def render_recipe(item: dict[str, Any], text: str) -> None:
    _out.print(f"# {item['path']} ({item['status']})", soft_wrap=True)
    _out.print(text, markup=False, soft_wrap=True)
    if item.get("config"):
        import yaml

        _out.print("# every option, defaults filled in (None = chosen from the target at run time):")
        _out.print(yaml.safe_dump(item["config"], sort_keys=False), markup=False, soft_wrap=True)
