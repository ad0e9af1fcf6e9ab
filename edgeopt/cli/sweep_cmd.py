"""``edgeopt sweep``: compression levels x runtimes on a target, retention measured there; docs/sweep.md.

Exit codes: 0 a recommendation exists, 1 no config meets the retention threshold and budget, 2 bad input,
3 device error. With ``--devices`` (edgeopt/cli/sweep_fleet.py): 0 every device has a recommendation, 1 a device
has none or could not run, 3 every device failed to run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..dispatch import entry, kind_of
from ..errors import ExitCode
from ..registry import KindDescriptor
from ..settings import RemoteSpec
from ..untrusted import clean_text
from .fleet_options import FleetOptions, fleet_options
from .json_out import emit_json
from .kind_flags import flag_values, kind_flag_options
from .kind_help import option_help
from .measure_options import measure_options
from .metric_options import MetricParams, metric_param_options
from .progress import SweepProgress
from .remote_options import remote_options
from .sink_options import MlflowTarget, mlflow_options
from .sweep_call import SweepCall, csv

if TYPE_CHECKING:
    from ..sweep.result import SweepResult


def _interval(lv: Any) -> str:
    """The ranking's median of round medians and its 95 % interval, when the level was ranked."""
    if lv.latency_ms_round_median is None or lv.latency_ms_low is None:
        return ""
    return (f"  ranked {lv.latency_ms_round_median:.3f} ms [{lv.latency_ms_low:.3f}, {lv.latency_ms_high:.3f}] "
            f"over {lv.latency_rounds} rounds")


ESTIMATE_MARK = "~"
SINGLE_RUN_MARK = "1"  # p50 of one short run, not confirmed in interleaved rounds
INTERFERENCE_MARK = "!"  # measured while other processes used the CPUs


def _latency_mark(lv: Any) -> str:
    """One character after the p50 cell: :data:`INTERFERENCE_MARK`, :data:`SINGLE_RUN_MARK` or a space."""
    return INTERFERENCE_MARK if lv.interference else (SINGLE_RUN_MARK if lv.single_run else " ")


def _energy(lv: Any) -> str:
    """The mJ cell: 7 characters, an estimate (target TDP, no sensor) marked with :data:`ESTIMATE_MARK`."""
    if lv.energy_mj is None:
        return "      -"
    return f"{lv.energy_mj:6.2f}{ESTIMATE_MARK}" if lv.energy_source == "estimate" else f"{lv.energy_mj:7.2f}"


def _params(params: dict[str, Any]) -> str:
    return "(" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")" if params else ""


def _echo(line: str) -> None:
    """A line of the sweep's table: recipes, runtimes, reasons and paths are data (edgeopt.untrusted)."""
    click.echo(clean_text(line, limit=20_000))


def _render(result: SweepResult) -> None:
    """The sweep's table, frontier and recommendation on stdout."""
    _echo(f"metric {result.metric}{_params(result.metric_params)} on output {result.output}, "
               f"{result.eval_samples} eval samples; threads {result.threads}, streams {result.streams}, "
               f"batch {result.batch}")
    _echo(f"{'recipe':<14} {'runtime':<12} {'size MB':>8} {'p50 ms':>8} {'p99 ms':>8} {'mem MB':>7} "
               f"{'mJ':>7} {'retention':>9} verdict")
    for lv in result.levels:
        verdict = "pass" if lv.passed else ("low-accuracy" if not lv.meets_retention else "over-budget")
        verdict = "no change (= fp32)" if lv.no_change else verdict
        verdict += ", negligible change (~ fp32)" if lv.negligible_change else ""
        mem = f"{lv.memory_mb_peak:7.1f}" if lv.memory_mb_peak is not None else "      -"
        mj = _energy(lv)
        _echo(f"{lv.recipe:<14} {lv.runtime:<12} {lv.size_bytes / 1e6:8.2f} "
                   f"{lv.latency_ms:8.3f}{_latency_mark(lv)}{lv.latency_ms_p99:8.3f} {mem} {mj} {lv.retention:9.4f} "
                   f"{verdict}{_interval(lv)}")
    if any(lv.energy_source == "estimate" and lv.energy_mj is not None for lv in result.levels):
        _echo(f"{ESTIMATE_MARK} mJ: ESTIMATE from the target's TDP (no power sensor read), not a measurement")
    if any(lv.single_run for lv in result.levels):
        _echo(f"{SINGLE_RUN_MARK} p50: one short run, not confirmed in interleaved rounds (docs/sweep.md)")
    if any(lv.interference for lv in result.levels):
        _echo(f"{INTERFERENCE_MARK} p50: measured while other processes used the CPUs; may be inflated")
    _echo("pareto: " + ", ".join(f"{p.recipe}/{p.runtime}" for p in result.pareto))
    rec = result.recommendation
    untested = ", retention untested by this data" if result.eval_cannot_tell else ""
    _echo(f"recommendation: {rec.recipe} on {rec.runtime} (retention {rec.retention:.4f}{untested}, "
               f"p50 {rec.latency_ms:.3f} ms)" if rec else f"no recommendation: {result.reason}")
    if rec is not None and rec.off_frontier:
        _echo(f"note: {rec.off_frontier}")
    if rec is not None and rec.ceiling:
        _echo(f"int8 ceiling: {rec.ceiling}")
    if result.eval_cannot_tell:
        _echo(f"warning: {result.eval_cannot_tell}")
    _render_shipped(result)
    _echo(f"plot: {result.plot}")


def _render_shipped(result: SweepResult) -> None:
    """Where the recommendation ships and whether the shipped files alone give its retention."""
    rec = result.recommendation
    if rec is None or rec.deployment is None:
        return
    opts = ", ".join(f"{k}={v}" for k, v in sorted((rec.runtime_options or {}).items())) or "none"
    _echo(f"deployment: {rec.deployment} (runtime options: {opts})")
    check = rec.shipped_check
    if check is None or check.retention_as_shipped is None:
        _echo("shipped check: not run (see warnings)")
        return
    _echo(f"shipped check: retention as shipped {check.retention_as_shipped:.6g}, with the runtime's defaults "
               f"{check.retention_with_defaults:.6g}" + (f"; {check.note}" if check.note else ""))


@click.command("sweep")
@click.argument("model", type=click.Path(path_type=Path))
@click.option("--target", "-t", default=None, help="Target name (default: the device's, else local).")
@click.option("--eval", "eval_data", required=True, type=click.Path(path_type=Path),
              help=option_help(".npz keyed by input name (+ labels) or a class-per-subfolder image folder",
                               "sweep_eval"))
@click.option("--recipes", default=None, help="Comma-separated recipes (default fp16,int8,int4,prune30-int8).")
@click.option("--min-retention", default=0.99, show_default=True, type=float, help="Retention threshold.")
@click.option("--metric", default=None,
              help=option_help("top1, top5, agreement, cosine, snr_db, max_abs_err, mask_iou, detection or "
                               "pkg.mod:fn", "sweep_metric"))
@kind_flag_options("sweep_options")  # each kind's own flags, from its sweep_options model
@click.option("--output", "output_sel", default=None, help="Output the metric reads: INDEX|NAME[,slice=[:,4:,:]].")
@metric_param_options
@measure_options("fps", fps={"help": "Real-time budget (p99 <= 1000/fps)."})
@click.option("--objective", default="latency", show_default=True, type=click.Choice(["latency", "size", "energy"]))
@click.option("--runtimes", default=None, help="Comma-separated runtimes (default: all installed for the target).")
@click.option("--calib", default=None, type=click.Path(path_type=Path),
              help=option_help("Calibration data (default: --eval)", "sweep_calib"))
@click.option("--out", "out_dir", default=None, type=click.Path(file_okay=False, path_type=Path), help="Output dir.")
@click.option("--max-trials", default=12, show_default=True, type=int, help="Most INT8 search trials.")
@click.option("--max-search-s", default=600.0, show_default=True, type=float, help="Time bound of the INT8 search, s.")
@click.option("--nncf-budget-s", default=0.0, show_default=True, type=click.FloatRange(min=0),
              help="With openvino: also try NNCF accuracy control in the INT8 search when this much time is left, "
                   "s (0: off).")
@measure_options(
    "iterations", "min_duration_s", "threads",
    iterations={"decls": ("--iterations",), "type": int, "default": 100,
                "help": "Timed iterations per level (at least)."},
    min_duration_s={"type": float, "default": 1.0, "help": "Minimum timed run per level, s."},
    threads={"type": int, "help": "Runtime threads on the target (0: default)."})
@click.option("--eval-limit", default=None, type=int, help="Use at most this many eval samples.")
@click.option("--no-int8-search", is_flag=True, help="Do not search when INT8 misses the threshold.")
@click.option("--no-cache", is_flag=True, help="Ignore cached levels; re-run everything.")
@click.option("--history-db", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="Record measured levels in this history store (kind sweep).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON only.")
@mlflow_options
@remote_options()
@fleet_options(deadline_default="3600 s")
def sweep_cmd(model: Path, target: str | None, eval_data: Path, recipes: str | None, min_retention: float,
              metric: str | None, output_sel: str | None, measure: dict[str, Any], objective: str,
              kind_flags: dict[str, Any], runtimes: str | None, calib: Path | None, out_dir: Path | None,
              max_trials: int, max_search_s: float, nncf_budget_s: float, eval_limit: int | None,
              no_int8_search: bool, no_cache: bool, history_db: Path | None, as_json: bool, remote: RemoteSpec,
              metric_params: MetricParams, mlflow: MlflowTarget | None, fleet: FleetOptions) -> int:
    """Sweep compression levels of MODEL on a target and recommend the best (runtime, recipe); with --devices on
    many devices at once: the artifacts built once here, one measuring job per device (docs/fleet.md)."""
    given = dict(locals())
    kind = kind_of(model)  # the registry's answer; the kind's sweep_cli entry sweeps it
    call = SweepCall(**{k: v for k, v in given.items() if k != "kind_flags"},
                     options=flag_values(kind, "sweep_options", kind_flags))
    return int(entry(kind, "sweep_cli")(kind, call))


def sweep_tensor(kind: KindDescriptor, c: SweepCall) -> int:
    """The tensor kind's ``sweep_cli`` entry: the sweep of a one-pass model."""
    model, target, measure, remote, fleet, mlflow = c.model, c.target, c.measure, c.remote, c.fleet, c.mlflow
    max_trials, no_int8_search, as_json = c.max_trials, c.no_int8_search, c.as_json
    from ..sweep.api import SweepOptions, level_settings, run_sweep

    options = SweepOptions(eval_data=c.eval_data, recipes=csv(c.recipes), min_retention=c.min_retention,
                           metric=c.metric_params.spec(c.metric), output=c.output_sel, objective=c.objective,
                           runtimes=csv(c.runtimes), calib=c.calib, out_dir=c.out_dir, eval_limit=c.eval_limit,
                           no_cache=c.no_cache, int8_search=not no_int8_search, max_trials=max_trials,
                           max_search_s=c.max_search_s, history_db=c.history_db, nncf_budget_s=c.nncf_budget_s)
    settings = level_settings(**measure)
    if fleet.enabled:
        from .sweep_fleet import run_fleet_sweep

        return run_fleet_sweep(model, options, settings, fleet=fleet, remote=remote, target=target,
                               mlflow=mlflow is not None, as_json=as_json)
    with SweepProgress(max_trials=max_trials if not no_int8_search else None) as progress:
        result = run_sweep(model, options, settings, target=target, remote=remote, progress=progress)
    if mlflow is not None:
        mlflow.log("sweep", result)
    if as_json:
        emit_json(result)
    else:
        _render(result)
    return int(ExitCode.OK if result.recommendation else ExitCode.GATE_FAILED)
