"""``edgeopt sweep LLM_DIR --eval TEXT``: the LLM branch of the sweep command (edgeopt.llm.sweep; docs/llm.md).

Exit codes as the ONNX sweep: 0 a recommendation exists, 1 no level keeps the retention threshold,
2 bad input (folder, text, calibration text, metric, level), 3 device error. With ``--devices``
(:mod:`.fleet_sweep`) as the ONNX fleet sweep's: 0 every device has a recommendation, 1 a device has
none or could not run, 3 every device failed to run.
"""

from __future__ import annotations

from pathlib import Path

import click

from ...cli.fleet_options import FleetOptions
from ...cli.json_out import emit_json
from ...cli.sweep_call import SweepCall, csv
from ...errors import ExitCode
from ...registry import KindDescriptor
from ...settings import RemoteSpec
from ...untrusted import clean_text
from ..retention import RetentionSettings
from ..sweep import LlmSweepOptions, bench_cell, run_llm_sweep
from ..sweep_result import LlmSweepResult


def _echo(line: str, err: bool = False) -> None:
    """A line of the LLM sweep's table: level names, reasons and paths are data (edgeopt.untrusted)."""
    click.echo(clean_text(line, limit=20_000), err=err)


def _render(result: LlmSweepResult) -> None:
    _echo(f"{'level':18} {'runtime':18} {'retention':>9} {'top1':>6} {'KL':>9} {'ppl':>9} {'tok/s':>8} "
               f"{'TTFT ms':>8}  verdict")
    for lv in result.levels:
        r = lv.retention
        verdict = "reference" if lv.reference else ("pass" if lv.passed else "fail")
        _echo(f"{lv.name:18} {lv.runtime:18} {r.retention:9.4f} {r.top1_agreement:6.3f} {r.kl_mean:9.2e} "
                   f"{r.ppl_candidate:9.2f} {lv.rank_tokens_per_s or 0:8.1f} {lv.ttft_ms_p50 or 0:8.2f}  {verdict}")
    rec = result.recommendation
    if rec is not None:
        _echo(f"recommended: {rec.name}@{rec.runtime} ({rec.reason}); deployment: {rec.deployment}")
        check = rec.shipped_check
        if check is None or check.retention_as_shipped is None:
            _echo("shipped check: not run (see warnings)")
        else:
            verdict = "passed" if check.passed else "FAILED" if check.passed is False else "not compared"
            _echo(f"shipped check: {verdict}, retention as shipped {check.retention_as_shipped:.6g}, measured "
                  f"{rec.retention:.6g} (tolerance {check.tolerance})" + (f"; {check.note}" if check.note else ""))
    else:
        _echo(f"no recommendation: {result.binding_constraint}")
    _echo(f"sweep.json: {Path(result.out_dir) / 'sweep.json'}  chart: {result.plot}", err=True)


def sweep_generative(kind: KindDescriptor, c: SweepCall) -> int:
    """The generative kind's ``sweep_cli`` entry: ``edgeopt sweep``'s options to :func:`sweep_llm_cmd` (its own
    ``--levels`` in ``c.options``, the flagged field of :class:`~edgeopt.llm.sweep_options.LlmSweepOptions`)."""
    return sweep_llm_cmd(c.model, eval_text=c.eval_data, min_retention=c.min_retention, metric=c.metric,
                         levels=c.options.get("levels"), runtimes=csv(c.runtimes), out_dir=c.out_dir,
                         threads=c.measure.get("threads"), eval_limit=c.eval_limit, calib=c.calib, target=c.target,
                         remote=c.remote, fleet=c.fleet, as_json=c.as_json, history_db=c.history_db)


def sweep_llm_cmd(model: Path, *, eval_text: Path, min_retention: float, metric: str | None, levels: list[str] | None,
                  runtimes: list[str] | None, out_dir: Path | None, threads: int | None, eval_limit: int | None,
                  calib: Path | None, target: str | None, remote: RemoteSpec, fleet: FleetOptions,
                  as_json: bool, history_db: Path | None = None) -> int:
    """Run the LLM sweep (on one runner, or with --devices on each device) with the shared sweep flags that
    apply (the ONNX-only ones are ignored); ``history_db``: record every measured level there."""
    retention = RetentionSettings(threads=threads or 0, **({"windows": eval_limit} if eval_limit else {}))
    options = LlmSweepOptions(eval_text=eval_text, min_retention=min_retention, metric=metric, levels=levels,
                              runtimes=runtimes, out_dir=out_dir, retention=retention,
                              workload=bench_cell(threads or 0), calib_text=calib, history_db=history_db)
    if fleet.enabled:
        from .fleet_sweep import run_llm_fleet_sweep

        return run_llm_fleet_sweep(model, options, fleet=fleet, remote=remote, target=target, as_json=as_json)
    result = run_llm_sweep(model, options, target=target, remote=remote,
                           say=lambda text: click.echo(text, err=True))
    for warning in result.warnings:  # on stderr with --json too (a level skipped, a history not written)
        _echo(f"edgeopt: warning: {warning}", err=True)
    if result.history_run_ids:
        click.echo(f"history: runs {', '.join(map(str, result.history_run_ids))} (kind sweep)", err=True)
    if as_json:
        emit_json(result)
    else:
        _render(result)
    return int(ExitCode.OK if result.recommendation else ExitCode.GATE_FAILED)
