"""``edgeopt history``, ``edgeopt compare RUN_A RUN_B`` and ``edgeopt baseline set|list`` (docs/history.md).

RUN is a run id, ``latest``, or a baseline name (``NAME@DEVICE`` when the name exists for several devices).
``compare`` exits 1 when RUN_B is a latency regression of RUN_A, so CI can gate on it.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ExitCode
from ..history import open_store
from ..history.baselines import set_baseline
from ..history.cell_compare import compare_runs
from ..history.compare import DEFAULT_ALPHA, DEFAULT_TOLERANCE_PCT
from ..untrusted import clean_text
from .common import emit_json, json_option
from .history_options import history_db_option
from .history_render import render_baselines, render_runs, show_comparison
from .kind_help import sentence_help


@click.command("history")
@click.option("--model", "-m", default=None, help="Model file stem, path fragment or sha256 prefix.")
@click.option("--target", "-t", default=None, help="Target name or device label.")
@click.option("--kind", type=click.Choice(["bench", "qualify", "sweep"]), default=None, help="Only runs of this kind.")
@click.option("--limit", "-n", type=click.IntRange(min=1), default=50, show_default=True, help="At most this many.")
@click.option("--tensorboard", "tensorboard", type=click.Path(file_okay=False, path_type=Path), default=None,
              metavar="DIR", help="Also write the listed runs as TensorBoard scalars (an event file) under DIR.")
@history_db_option
@json_option
def history_cmd(model: str | None, target: str | None, kind: str | None, limit: int, tensorboard: Path | None,
                history_db: Path | None, as_json: bool) -> None:
    """List recorded runs, newest first."""
    store = open_store(history_db)
    runs = store.runs(model=model, target=target, kind=kind, limit=limit)
    for note in store.skipped:
        click.echo(f"edgeopt: warning: {clean_text(note)}", err=True)  # a history row's text: data
    if tensorboard is not None:
        from ..sinks.tensorboard_history import export_history

        click.echo(f"edgeopt: TensorBoard scalars of {len(runs)} run(s): {export_history(runs, tensorboard)}",
                   err=True)
    if as_json:
        emit_json([r.model_dump(mode="json") for r in runs])
    else:
        render_runs(runs, store.path)


@click.command("compare", help=sentence_help(
    "Is RUN_B slower than RUN_A beyond noise? Exit 1 when it is a regression.",
    "compare"))  # each kind's sentence: how two of its runs are compared (its descriptor's cli_help.compare)
@click.argument("run_a")
@click.argument("run_b")
@click.option("--tolerance", "tolerance_pct", type=click.FloatRange(min=0), default=DEFAULT_TOLERANCE_PCT,
              show_default=True, help="Median slowdown (percent) tolerated before a significant change is a "
              "regression.")
@click.option("--alpha", type=click.FloatRange(min=0, max=1, min_open=True, max_open=True), default=DEFAULT_ALPHA,
              show_default=True, help="Significance level of the Mann-Whitney U test.")
@history_db_option
@json_option
def compare_cmd(run_a: str, run_b: str, tolerance_pct: float, alpha: float, history_db: Path | None,
                as_json: bool) -> int:
    result = compare_runs(open_store(history_db), run_a, run_b, tolerance_pct=tolerance_pct, alpha=alpha)
    if as_json:
        emit_json(result)
    else:  # the runs' kind's own renderer, else its shape's (history_render.show_comparison)
        show_comparison(result)
    return int(ExitCode.GATE_FAILED if result.regression else ExitCode.OK)


@click.group("baseline")
def baseline() -> None:
    """Named reference runs per device (for compare and the qualify regression gate)."""


@baseline.command("set")
@click.argument("runs", nargs=-1, required=True)
@click.option("--name", required=True, help="Baseline name, e.g. release-1.2.")
@click.option("--force", is_flag=True, help="Replace NAME even when it points at runs of another model, runtime "
              "or target.")
@history_db_option
@json_option
def baseline_set(runs: tuple[str, ...], name: str, force: bool, history_db: Path | None, as_json: bool) -> None:
    """Point baseline NAME at RUN (one per device; give several RUNs for several devices).

    Refused (exit 2) when NAME already points at runs of a different model, runtime or target, unless --force.
    """
    store = open_store(history_db)
    made = [set_baseline(store, name, run, force=force) for run in runs]
    if as_json:
        emit_json([b.model_dump(mode="json") for b in made])
    else:
        for b in made:
            click.echo(clean_text(f"baseline {b.name} for {b.device} -> run {b.run_id}"))


@baseline.command("list")
@history_db_option
@json_option
def baseline_list(history_db: Path | None, as_json: bool) -> None:
    """List the baselines."""
    store = open_store(history_db)
    items = store.baselines()
    if as_json:
        emit_json([b.model_dump(mode="json") for b in items])
    else:
        render_baselines(items, store.path)
