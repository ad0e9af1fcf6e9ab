"""``edgeopt bench MODEL`` for a model of a plug-in kind (the generic engine, :mod:`edgeopt.bench.kind_bench`):
``--workload KEY=VALUE`` (the kind's workload settings), a table of its cells' metrics or ``--json``, the history. A
deployment of such a model runs its files with exactly its settings (a flag that contradicts them: exit 2 unless
``--override-deployment``), as a one-pass deployment does (docs/bench.md, "Deployments").

Exit codes as every bench: 0 a valid run, 1 an invalid run (an impossible value, the watchdog), 2 bad input,
3 device error (docs/exit-codes.md).
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel
from rich.console import Console

from ..bench.kind_bench import bench_kind
from ..deploy import is_deployment
from ..errors import InputError
from ..metrics.kind_result import KindBenchResult
from ..registry import KindDescriptor
from ..settings import MeasureSettings, RemoteSpec
from ..untrusted import for_rich
from .bench_call import BenchCall, check_deployment_run
from .bench_emit import emit_result
from .deployment_flags import given_settings
from .history_options import HistoryOptions
from .progress import StderrProgress
from .runtime_flags import runtime_choice
from .tables import Col, fit_table, human_count

_out = Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 150)


workload_option = click.option(
    "--workload", "workload", multiple=True, metavar="KEY=VALUE",
    help="A workload setting of a plug-in model kind (repeat it), checked against the kind's workload model "
         "(docs/bench.md, \"Plug-in model kinds\").")


def bench_generic(kind: KindDescriptor, c: BenchCall) -> int:
    """The generic engine's ``bench_cli`` entry: bench's parsed options for a plug-in kind's model, its settings,
    then :func:`run_kind_bench`."""
    measure, threads, batches = c.measure, c.threads, c.batches
    settings = MeasureSettings.from_kwargs(
        **{**measure, "fps": None,
           **runtime_choice(measure["runtime"], c.runtime_flags, measure["runtime_options"])},
        use_target_fps=False, threads=threads[0] if threads else 0, batch=batches[0] if batches else 1,
        keep_samples=True)
    given = None
    if is_deployment(c.model):  # its files, exactly its settings (docs/bench.md, "Deployments")
        check_deployment_run(c.model, fleet=c.fleet.enabled, tradeoff=len(threads) > 1 or len(batches) > 1)
        given = given_settings(c.runtime_flags, {"threads": "threads", "batch": "batches"})
    refused = {"--devices": c.fleet.enabled, "--mlflow": c.mlflow is not None, "--html": c.html is not None,
               "--threads/--batch lists": len(threads) > 1 or len(batches) > 1}
    flagged = c.settings.model_dump(exclude_unset=True) if isinstance(c.settings, BaseModel) else {}
    return run_kind_bench(c.model, kind, settings, workload=c.workload, target=c.target, remote=c.remote,
                          targets_dirs=c.targets_dirs, history=c.history, samples=c.samples, as_json=c.as_json,
                          refused=refused, flagged=flagged, given=given, override_deployment=c.override_deployment)


def workload_pairs(items: Sequence[str]) -> dict[str, str]:
    """``("frame_ms=20", ...)`` as a dict. Raises InputError naming an item without ``=`` or a repeated key."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--workload {item!r}: give KEY=VALUE, e.g. --workload frame_ms=20")
        if key.strip() in out:
            raise InputError(f"--workload {key.strip()} given twice: give each setting once")
        out[key.strip()] = value.strip()
    return out


def run_kind_bench(model: Path, kind: KindDescriptor, settings: MeasureSettings, *, workload: Sequence[str],
                   target: str | None, remote: RemoteSpec, targets_dirs: Sequence[Path], history: HistoryOptions,
                   samples: bool, as_json: bool, refused: dict[str, bool],
                   flagged: Mapping[str, Any] | None = None, given: Collection[str] | None = None,
                   override_deployment: bool = False) -> int:
    """Bench ``model`` of generic kind ``kind`` once; record, print; the exit code. Its workload: ``flagged`` (the
    fields its workload model makes flags of, edgeopt/cli/kind_flags.py) and ``--workload`` pairs over them. A
    deployment: ``given``, the deployed settings the command line set, must agree with it unless
    ``override_deployment``.

    Raises:
        InputError: an option that does not apply to a plug-in kind (``refused``: flag -> given), a bad workload.
    """
    not_here = [flag for flag, on in refused.items() if on]
    if not_here:
        raise InputError(f"{model} is a {kind.name} model (a plug-in kind): {', '.join(not_here)} do(es) not apply to "
                         "it; bench it on one device, one threads/batch value (docs/bench.md)")
    with StderrProgress() as progress:
        result = bench_kind(model, settings, workload={**(flagged or {}), **workload_pairs(workload)}, target=target,
                            remote=remote, progress=progress, targets_dirs=targets_dirs, given=given,
                            override_deployment=override_deployment)
    return emit_result(result, result if samples else result.without_readings(), history=history,
                       device=remote.device, verdict=None if result.valid else "fail", ok=result.valid,
                       as_json=as_json, render=render_kind_bench)


_COLS = (Col("cell", 9, numeric=False), Col("metric", 9, numeric=False), Col("unit", 5, numeric=False),
         Col("p50", 8), Col("p99", 6), Col("mean", 5), Col("value", 7), Col("readings", 4))


def render_kind_bench(r: KindBenchResult) -> None:
    """One row per cell and metric; the verdict, invalid reasons and warnings below."""
    rows: list[list[str]] = []
    for c in r.cells:
        for s in c.series:
            rows.append([c.key or "-", s.metric, s.unit, *(human_count(s.summary.get(k))
                                                          for k in ("p50", "p99", "mean", "value")),
                         f"{len(s.readings):,}" if s.readings else "-"])
    title = (f"{Path(r.model.path).name} ({r.model_kind}, {r.model_format}) on {r.target} via {r.runner}, "
             f"{r.runtime.name} {r.runtime.version}")
    table, _ = fit_table(for_rich(title), _COLS, [[for_rich(x) for x in row] for row in rows], _out.width)
    _out.print(table)
    if r.deployment is not None:
        _out.print(for_rich(f"deployment: {r.deployment.name} ({r.deployment.path})"), soft_wrap=True)
    if r.workload:
        _out.print(for_rich("workload: " + ", ".join(f"{k}={v}" for k, v in r.workload.items())), soft_wrap=True)
    for reason in r.invalid_reasons:
        _out.print(f"[red]INVALID:[/] {for_rich(reason)}", soft_wrap=True)
    for note in [*r.warnings, *r.target_mismatch]:
        _out.print(f"[yellow]note:[/] {for_rich(note)}", soft_wrap=True)
