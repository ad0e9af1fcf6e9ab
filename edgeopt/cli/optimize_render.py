"""Tables for ``edgeopt optimize`` and ``edgeopt recipes``, and the stderr progress of passes.

JSON output never passes through here; stdout carries only tables (or JSON), progress and warnings go to stderr.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table

from ..optimize import OptimizeResult
from ..optimize.fidelity import FidelityRow
from ..untrusted import for_rich
from .progress import ProgressView
from .tables import Col, fit_table, human_bytes

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


def _fidelity_line(row: FidelityRow) -> str:
    """Which samples, which output and which metric the fidelity columns come from."""
    where = f"the first {row.samples} {row.data} samples of {row.source}" if row.source else \
        f"{row.samples} {row.data} samples"
    output = f"output {row.output}" if row.output else "every output"
    metric = f"; metric {row.metric} on output {row.output or '0'}, retention vs the input" if row.metric else ""
    if not row.metric and row.top1_agreement is None:
        metric = "; no task metric (outputs not classifier-like): pass --metric and --output, docs/sweep.md"
    return f"fidelity on {where}; errors and cosine over {output}{metric}"


_METRIC_COLS = (Col("metric", 7), Col("retention", 7))


def _optimize_cols(with_metric: bool) -> tuple[Col, ...]:
    return (
        Col("artifact", 9, numeric=False, flexible=True, flex_min=16), Col("pass", 3, numeric=False),
        Col("precision", 6, numeric=False), Col("size", 8), Col("size ratio", 2), Col("max |err|", 1),
        Col("cosine", 7), Col("top-1", 6), Col("accuracy", 7), *(_METRIC_COLS if with_metric else ()),
        Col("p50 ms", 5), Col("speed-up", 8), Col("pass s", 0),
    )


def _speedup(row: FidelityRow | None) -> str:
    """``1.61x`` with its interval, ``~noise`` when the interval covers 1.0 (issue 16, item 7)."""
    if row is None or not row.speedup:
        return "-"
    if not row.speedup_ci:
        return f"{row.speedup:.2f}x"
    low, high = row.speedup_ci
    noise = " ~noise" if low <= 1.0 <= high else ""
    return f"{row.speedup:.2f}x [{low:.2f}-{high:.2f}]{noise}"


def _optimize_rows(r: OptimizeResult, with_metric: bool) -> list[list[str]]:
    rows = {row.artifact: row for row in r.fidelity or []}
    out = []
    for art in [r.model, *r.artifacts]:
        row = rows.get(art.name)
        metric = [_n(row.metric_value if row else None, ".4f"), _n(row.retention if row else None, ".4f")]
        out.append([
            art.name, art.pass_name or "-", art.precision.value, human_bytes(art.size_bytes),
            _n(row.size_ratio if row else None, ".3f"), _n(row.max_abs_error if row else None, ".3g"),
            _n(row.cosine_similarity if row else None, ".5f"), _n(row.top1_agreement if row else None, ".1%"),
            _n(row.accuracy if row else None, ".2%"), *(metric if with_metric else []),
            _n(row.latency_ms_p50 if row else None, ".3f"), _speedup(row),
            _n(art.seconds, ".2f") if art.pass_name else "-",
        ])
    return out


def render_optimize(r: OptimizeResult, console: Console | None = None) -> None:
    """The artifacts table, fitted to the terminal (numbers are never cut), then fidelity notes and warnings."""
    out = console or _out
    rows = {row.artifact: row for row in r.fidelity or []}
    with_metric = any(row.metric for row in rows.values())
    # names and notes come from model files, recipes and passes: data, never markup (edgeopt.untrusted)
    out.print(for_rich(f"optimize {r.model.path} for {r.target} with recipe {r.recipe} -> {r.out_dir}"),
              soft_wrap=True)
    table, left_out = fit_table(None, _optimize_cols(with_metric), _optimize_rows(r, with_metric), out.width)
    out.print(table)
    if left_out:
        out.print(f"(left out at {out.width} columns: {', '.join(left_out)}; all of it: --json or manifest.json)",
                  soft_wrap=True)
    if any(row.speedup for row in r.fidelity or []):
        out.print("speed-up: reference p50 / artifact p50 on this machine, [95 % interval from per-block medians]; "
                  "~noise: the interval covers 1.0, so no speed-up is shown", soft_wrap=True)
    first = next(iter(r.fidelity or []), None)
    if first is not None:  # the reference row is not always the input (a PyTorch model is compared as ONNX)
        out.print(for_rich(f"{_fidelity_line(first)}; manifest: {r.manifest_path}"), soft_wrap=True)
        for line in _original_fidelity(r, first.artifact):
            out.print(line, soft_wrap=True)
    for art in r.artifacts:
        for note in rows[art.name].notes if art.name in rows else []:
            out.print(for_rich(f"note: {art.name}: {note}"), soft_wrap=True)
    for w in r.warnings:
        out.print(f"[yellow]warning:[/yellow] {for_rich(w)}", soft_wrap=True)


def _original_fidelity(r: OptimizeResult, reference: str) -> list[str]:
    """When the fidelity table's reference is not the input model (a PyTorch input: the reference is its first
    ONNX export, made after the torch passes), say so, and show what the passes measured against the original."""
    if reference == r.model.name:
        return []
    lines = [f"[bold yellow]note:[/bold yellow] the fidelity rows compare with {for_rich(reference)}, the first ONNX "
             f"export (after the PyTorch passes), not with the original model {for_rich(r.model.path)}"]
    for art in r.artifacts:
        fid = art.report.get("fidelity") if isinstance(art.report, dict) else None
        if isinstance(fid, dict) and fid.get("cosine_mean") is not None:
            agree = fid.get("top1_agreement")
            on = art.report.get("fidelity_on", "samples")
            lines.append(for_rich(f"fidelity of {art.name} to the original ({on}, {fid.get('samples')} samples): "
                                  f"cosine {fid['cosine_mean']:.5f}")
                         + (f", top-1 agreement {agree:.1%}" if agree is not None else ""))
        elif art.pass_name and art.format.value == "pytorch":
            lines.append(for_rich(f"fidelity of {art.name} to the original: not measured by {art.pass_name}"))
    return lines


def render_recipes(items: list[dict[str, Any]]) -> None:
    table = Table(title="edgeopt recipes")
    for col in ("name", "passes", "description", "status"):
        table.add_column(col)
    for item in items:
        table.add_row(item["name"], " -> ".join(item["passes"]), item["description"], item["status"])
    _out.print(table)


def render_recipe(item: dict[str, Any], text: str) -> None:
    _out.print(f"# {item['path']} ({item['status']})", markup=False, soft_wrap=True)
    _out.print(text, markup=False, soft_wrap=True)
    if item.get("config"):
        import yaml

        _out.print("# every option, defaults filled in (None = chosen from the target at run time):")
        _out.print(yaml.safe_dump(item["config"], sort_keys=False), markup=False, soft_wrap=True)
