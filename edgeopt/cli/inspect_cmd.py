"""``edgeopt inspect MODEL.onnx``."""

from __future__ import annotations

from pathlib import Path

import click

from ..api import inspect as inspect_api
from .common import emit_json, json_option, parse_shapes, shape_options, targets_dir_option
from .render import render_inspect


@click.command("inspect")
@click.argument("model", type=click.Path(path_type=Path))
@click.option("--target", "-t", default=None, help="Add a roofline estimate for this target.")
@shape_options
@targets_dir_option
@json_option
def inspect_cmd(
    model: Path, target: str | None, shapes: tuple[str, ...], batch: int, targets_dirs: tuple[Path, ...],
    as_json: bool,
) -> None:
    """Signature, parameters, op histogram, MACs/FLOPs and (with --target) a roofline estimate."""
    result = inspect_api(model, target=target, shapes=parse_shapes(shapes), batch=batch, targets_dirs=targets_dirs)
    if as_json:
        emit_json(result)
    else:
        render_inspect(result)
