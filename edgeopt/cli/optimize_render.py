"""Tables for ``edgeopt optimize`` and ``edgeopt recipes``, and the stderr progress of passes.

JSON output never passes through here; stdout carries only tables (or JSON), progress and warnings go to stderr.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table

from ..fidelity import FidelityRow
from ..optimize import OptimizeResult

_out = Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 160)


class StderrReporter:
    """A pass ``Reporter`` printing steps, warnings and a progress line on stderr."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._last: tuple[str, int] | None = None

    def info(self, message: str) -> None:
        self._line(f"edgeopt: {message}")

    def warn(self, message: str) -> None:
        self._line(f"edgeopt: WARNING: {message}")

    def progress(self, task: str, done: int, total: int | None) -> None:
        of = f"/{total}" if total else ""
        if self.tty:
            self.stream.write(f"\r\033[Kedgeopt: {task} {done}{of}")
            if total and done >= total:
                self.stream.write("\n")
            self.stream.flush()
            return
        step = max(1, (total or 10) // 4)  # on a pipe, a few lines per task, not one per sample
        if done == 1 or done % step == 0 or done == total:
            self._line(f"edgeopt: {task} {done}{of}")

    def _line(self, text: str) -> None:
        self.stream.write(("\r\033[K" if self.tty else "") + text + "\n")
        self.stream.flush()


def _n(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _fidelity_line(row: FidelityRow) -> str:
    """Which samples, which output and which metric the fidelity columns come from."""
    where = f"the first {row.samples} {row.data} samples of {row.source}" if row.source else \
        f"{row.samples} {row.data} samples"
    output = f"output {row.output}" if row.output else "every output"
    metric = f"; metric {row.metric} on output {row.output or '0'}, retention vs the input" if row.metric else ""
    if not row.metric and row.top1_agreement is None:
        metric = "; no task metric (outputs not classifier-like): pass --metric and --output, docs/sweep.md"
    return f"fidelity on {where}; errors and cosine over {output}{metric}"


def render_optimize(r: OptimizeResult) -> None:
    rows = {row.artifact: row for row in r.fidelity or []}
    with_metric = any(row.metric for row in rows.values())
    table = Table(title=f"optimize {r.model.path} for {r.target} with recipe {r.recipe} -> {r.out_dir}")
    cols = ["artifact", "pass", "precision", "size", "size ratio", "max |err|", "cosine", "top-1 agree", "accuracy",
            *(["metric", "retention"] if with_metric else []), "p50 ms", "speedup", "pass s"]
    for col in cols:
        table.add_column(col, justify="left" if col in ("artifact", "pass", "precision") else "right")
    for art in [r.model, *r.artifacts]:
        row = rows.get(art.name)
        metric = [_n(row.metric_value if row else None, ".4f"), _n(row.retention if row else None, ".4f")]
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
            *(metric if with_metric else []),
            _n(row.latency_ms_p50 if row else None, ".3f"),
            _n(row.speedup if row else None, ".2f") + ("x" if row and row.speedup else ""),
            _n(art.seconds, ".2f") if art.pass_name else "-",
        )
    _out.print(table)
    if r.model.name in rows:
        _out.print(f"{_fidelity_line(rows[r.model.name])}; manifest: {r.manifest_path}", soft_wrap=True)
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
