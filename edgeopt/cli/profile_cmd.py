"""``edgeopt profile MODEL [--vs OTHER]``: per-layer times with the runtime's own profiler (docs/profile.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..errors import ExitCode
from ..fsutil import atomic_write_text
from ..profile.api import profile, profile_vs
from ..profile.chrome_trace import write_chrome_trace
from ..profile.headline import ROUNDS
from ..profile.render import render_comparison, render_profile
from ..profile.schema import ProfileComparison, ProfileResult
from ..settings import RemoteSpec
from ..untrusted import for_json
from .common import emit_json, json_option, targets_dir_option
from .deployment_flags import OVERRIDE_DEPLOYMENT, given_settings
from .measure_options import measure_options
from .progress import StderrProgress
from .remote_options import remote_options
from .runtime_flags import runtime_choice, runtime_flag_options


def _write_outputs(result: ProfileResult | ProfileComparison, *, trace: Path | None, html: Path | None,
                   report_dir: Path | None, top: int) -> list[Path]:
    """Write the trace, the standalone HTML and the report directory; each file atomically."""
    from ..reports.profile_html import render_profile_html

    profiles = [result.a, result.b] if isinstance(result, ProfileComparison) else [result]
    labels = [f"{side}: {p.model.path}" for side, p in zip("AB", profiles, strict=False)] if len(profiles) > 1 else []
    written: list[Path] = []
    if trace is not None:
        written.append(write_chrome_trace(trace, profiles, labels))
    page = render_profile_html(result, top) if html is not None or report_dir is not None else ""
    if html is not None:
        atomic_write_text(html, page)
        written.append(html)
    if report_dir is not None:
        atomic_write_text(report_dir / "profile.json", for_json(result.model_dump_json(indent=2)))
        atomic_write_text(report_dir / "profile.html", page)
        written += [report_dir / "profile.json", report_dir / "profile.html",
                    write_chrome_trace(report_dir / "trace.json", profiles, labels)]
    return written


@click.command("profile")
@click.argument("model", type=click.Path(path_type=Path))
@click.option("--target", "-t", default=None,
              help="Target name (edgeopt targets) [default: the --device's target, else local].")
@measure_options(
    "runtime", runtime_flag_options, "runtime_options", "warmup", "iterations", "threads", "seed", "shapes", "batch",
    "inputs",
    runtime={"help": "onnxruntime, openvino or tensorrt (the runtimes with a per-layer profiler) [default: the "
                     "target's first runtime that loads the model's format]."},
    runtime_options={"help": "A runtime option (repeatable); docs/runtimes.md lists them."},
    warmup={"help": "Warm-up inferences before the unprofiled and before the profiled phase."},
    iterations={"default": 100,
                "help": "Inferences of each phase (per-layer median and p90 come from the profiled ones)."})
@click.option("--graph", type=click.Path(path_type=Path), default=None,
              help="ONNX model to join with when MODEL is not ONNX (e.g. the source of an OpenVINO IR).")
@click.option("--vs", "other", type=click.Path(path_type=Path), default=None,
              help="Profile OTHER the same way and compare layer by layer (A = MODEL, B = OTHER).")
@click.option("--vs-graph", type=click.Path(path_type=Path), default=None, help="--graph for OTHER.")
@click.option("--rounds", type=click.IntRange(min=0), default=ROUNDS, show_default=True,
              help="With --vs: time A and B without the profiler in this many interleaved rounds for the headline "
                   "ratio and its interval (0: the two profiles' own p50s, no interval).")
@click.option("--top", type=click.IntRange(min=1), default=15, show_default=True, help="Layers shown.")
@click.option("--trace", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write a Chrome trace (chrome://tracing, Perfetto) of one profiled inference.")
@click.option("--html", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write a self-contained HTML page of the profile.")
@click.option("--report-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write profile.json, profile.html and trace.json into this directory.")
@measure_options("max_duration_s", max_duration_s={"help": "Watchdog on each agent call, seconds."})
@OVERRIDE_DEPLOYMENT
@remote_options()
@targets_dir_option
@json_option
def profile_cmd(model: Path, target: str | None, measure: dict[str, Any],
                runtime_flags: dict[str, dict[str, Any]], graph: Path | None, other: Path | None,
                vs_graph: Path | None, rounds: int, top: int,
                trace: Path | None, html: Path | None, report_dir: Path | None, remote: RemoteSpec,
                targets_dirs: tuple[Path, ...], as_json: bool, override_deployment: bool) -> int:
    """Per-layer times of MODEL with the runtime's own profiler, joined with its ONNX graph. MODEL may be a
    deployment (a folder with deployment.json): it runs with its settings (docs/profile.md, "Deployments").

    Exit 0 profiled, 1 the device reported numbers that cannot be true (the profile is invalid and says why), 2 bad
    input (a runtime without a per-layer profiler included), 3 device error.
    """
    options: dict[str, Any] = dict(
        measure, target=target, **runtime_choice(measure["runtime"], runtime_flags, measure["runtime_options"]),
        targets_dirs=targets_dirs, progress=StderrProgress(), remote=remote,
        override_deployment=override_deployment, given=given_settings(runtime_flags),
    )
    if other is None:
        result: ProfileResult | ProfileComparison = profile(model, graph=graph, **options)
    else:
        result = profile_vs(model, other, graph=graph, vs_graph=vs_graph, rounds=rounds, **options)
    written = _write_outputs(result, trace=trace, html=html, report_dir=report_dir, top=top)
    if as_json:
        emit_json(result)
    elif isinstance(result, ProfileComparison):
        render_comparison(result, top)
    else:
        render_profile(result, top)
    for path in written:
        click.echo(f"edgeopt: wrote {path}", err=True)
    profiles = [result.a, result.b] if isinstance(result, ProfileComparison) else [result]
    return int(ExitCode.OK if all(p.valid for p in profiles) else ExitCode.GATE_FAILED)
