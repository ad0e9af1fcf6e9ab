"""``edgeopt bench`` with several ``--batch`` / ``--threads`` values: list options, the trade-off run, its table.

``--threads 1,2`` and ``--batch 1,2,4,8`` take comma lists; repeating the option is an error (it used to keep the
last value silently). With more than one value in either, bench measures each (threads, batch) pair and prints the
latency/throughput trade-off; ``--html FILE`` writes it with a plot (docs/bench.md).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from ..bench.tradeoff import TradeoffResult, benchmark_tradeoff
from ..errors import ExitCode
from ..fsutil import atomic_write_text
from ..settings import MeasureSettings, RemoteSpec
from ..untrusted import for_rich
from .json_out import emit_json
from .progress import StderrProgress
from .tables import Col, fit_table, human_count

F = TypeVar("F", bound=Callable[..., Any])


def _int_list(name: str, minimum: int) -> Any:
    def parse(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[int]:
        if len(values) > 1:
            raise click.BadParameter(f"given {len(values)} times ({', '.join(values)}): give it once, with a comma "
                                     f"list for several values, e.g. {name} {','.join(values)}", param_hint=name)
        out = []
        for text in (values[0].split(",") if values else []):
            try:
                value = int(text.strip())
            except ValueError:
                raise click.BadParameter(f"{text!r} is not an integer; e.g. {name} 1,2,4", param_hint=name) from None
            if value < minimum:
                raise click.BadParameter(f"{value} < {minimum}", param_hint=name)
            out.append(value)
        return out
    return parse


def list_options(f: F) -> F:
    """``--threads``, ``--batch`` (comma lists, once each) and ``--html`` (the trade-off page)."""
    f = click.option("--html", "html", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="With several --batch/--threads values: write the trade-off page with its plot here.")(f)
    f = click.option("--batch", "batches", multiple=True, callback=_int_list("--batch", 1), metavar="N[,N...]",
                     help="Batch size for a dynamic leading dimension [default: 1]; a list (1,2,4,8) measures each "
                          "and prints the latency/throughput trade-off.")(f)
    return click.option("--threads", "threads", multiple=True, callback=_int_list("--threads", 0),
                        metavar="N[,N...]", help="Runtime intra-op threads (0: runtime default) [default: 0]; a "
                        "list (1,2) measures each.")(f)


def is_tradeoff(batches: Sequence[int], threads: Sequence[int]) -> bool:
    return len(batches) > 1 or len(threads) > 1


def run_tradeoff(model: Path, settings: MeasureSettings, *, batches: Sequence[int], threads: Sequence[int],
                 target: str | None, remote: RemoteSpec, targets_dirs: Sequence[Path], html: Path | None,
                 as_json: bool) -> int:
    """Measure every pair, print (or emit) the trade-off, write the page; exit 1 when a point failed."""
    with StderrProgress() as progress:
        result = benchmark_tradeoff(model, settings, batches=batches or [1], threads=threads or [0], target=target,
                                    remote=remote, progress=progress, targets_dirs=targets_dirs)
    if html is not None:
        from ..reports.tradeoff_html import render_tradeoff_html

        atomic_write_text(html, render_tradeoff_html(result))
    if as_json:
        emit_json(result)
    else:
        render_tradeoff(result)
        if html is not None:
            click.echo(f"edgeopt: trade-off page: {html}", err=True)
    return int(ExitCode.OK if all(p.passed for p in result.points) else ExitCode.GATE_FAILED)


def render_tradeoff(result: TradeoffResult, console: Console | None = None) -> None:
    """One row per point, then the two choices."""
    out = console or Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    cols = (Col("batch", 9), Col("threads", 9), Col("p50 ms/call", 6), Col("p99 ms/call", 8), Col("ms/item", 7),
            Col("items/s", 8), Col("valid", 5, numeric=False), Col("choice", 4, numeric=False))
    rows = []
    for i, p in enumerate(result.points):
        choice = ", ".join(c for c, j in (("real time", result.best_latency), ("throughput", result.best_throughput))
                           if j == i) or "-"
        rows.append([str(p.batch), str(p.threads or "default"), human_count(p.latency_ms_p50),
                     human_count(p.latency_ms_p99), human_count(p.latency_ms_per_item),
                     human_count(p.throughput_ips), "yes" if p.valid else "NO", choice])
    # The title on its own line: a long model path must not wrap inside the table's width.
    out.print(for_rich(f"bench {result.model} on {result.target} ({result.runner}): latency / throughput"),
              soft_wrap=True)
    table, _ = fit_table(None, cols, rows, out.width)
    out.print(table)
    out.print(for_rich(result.summary), soft_wrap=True)
