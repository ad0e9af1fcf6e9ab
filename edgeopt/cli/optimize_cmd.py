"""``edgeopt optimize MODEL --target T --recipe R``: run a recipe, write artifacts and manifest.json, show fidelity."""

from __future__ import annotations

from pathlib import Path

import click

from ..dispatch import entry, kind_of
from ..optimize import optimize_graph
from ..registry import KindDescriptor
from .common import emit_json, json_option, parse_shapes, targets_dir_option
from .kind_help import command_help, option_help
from .metric_options import MetricParams, metric_param_options
from .optimize_call import OptimizeCall
from .optimize_render import StderrReporter, render_optimize


@click.command("optimize", help=command_help(
    "Optimize MODEL for a target with a recipe. Exit 0 done, 2 bad input/recipe or a pass failed, 3 device error.",
    "optimize"))  # each kind's paragraph (its descriptor's cli_help.optimize)
@click.argument("model")
@click.option("--target", "-t", required=True, help="Target name (edgeopt targets).")
@click.option("--recipe", "-r", required=True, help="Built-in recipe name (edgeopt recipes) or a recipe YAML path.")
@click.option("--calib", type=click.Path(path_type=Path), default=None,
              help=option_help("Calibration data: .npz keyed by input name, .npy, or a folder of images",
                               "optimize_calib"))
@click.option("--eval", "eval_data", type=click.Path(path_type=Path), default=None,
              help="Fidelity samples (.npz may hold 'labels' for accuracy) [default: the calibration data].")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output directory [default: out/<model>.<recipe>].")
@click.option("--input-shape", "--shape", "shapes", multiple=True, metavar="NAME=DxDxD",
              help="Concrete shape of an input with dynamic dims, e.g. x=1x3x224x224 (repeatable; --shape as in "
                   "bench, profile and sweep).")
@click.option("--metric", default=None,
              help="Task metric of the fidelity table, as in sweep: agreement, top1, cosine, mask_iou, detection...")
@click.option("--output", "output_sel", default=None,
              help="Output the fidelity columns read: INDEX|NAME[,slice=[:,4:,:]] [default: all outputs].")
@metric_param_options
@click.option("--no-fidelity", is_flag=True, help="Skip comparing the artifacts with the input.")
@click.option("--no-bench", is_flag=True, help="Skip the short local latency run of each artifact.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of random inputs.")
@targets_dir_option
@json_option
def optimize_cmd(model: str, target: str, recipe: str, calib: Path | None, eval_data: Path | None,
                 out_dir: Path | None, shapes: tuple[str, ...], no_fidelity: bool, no_bench: bool, seed: int,
                 targets_dirs: tuple[Path, ...], as_json: bool, metric: str | None, output_sel: str | None,
                 metric_params: MetricParams) -> int:
    """Optimize MODEL for a target with a recipe (its help: the ``help`` above, with each kind's paragraph)."""
    call = OptimizeCall(**locals())
    kind = kind_of(model)  # the registry's answer; the kind's optimize_cli entry optimizes it
    return int(entry(kind, "optimize_cli")(kind, call))


def optimize_tensor(kind: KindDescriptor, c: OptimizeCall) -> int:
    """The tensor kind's ``optimize_cli`` entry: run the recipe on a one-pass model."""
    reporter = StderrReporter()
    try:
        result = optimize_graph(c.model, target=c.target, recipe=c.recipe, calib=c.calib, out_dir=c.out_dir,
                                eval_data=c.eval_data, input_shapes=parse_shapes(c.shapes), progress=reporter,
                                fidelity=not c.no_fidelity, bench=not c.no_bench, targets_dirs=c.targets_dirs,
                                seed=c.seed, metric=c.metric_params.spec(c.metric), output=c.output_sel)
    finally:
        reporter.close()
    if c.as_json:
        emit_json(result)
    else:
        render_optimize(result)
    return 0
