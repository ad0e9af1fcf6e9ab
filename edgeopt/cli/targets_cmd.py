"""``edgeopt targets`` and ``edgeopt targets show NAME``."""

from __future__ import annotations

from pathlib import Path

import click

from ..targets import load_registry
from .common import emit_json, json_option, targets_dir_option
from .render import render_target, render_targets


@click.group(invoke_without_command=True)
@json_option
@targets_dir_option
@click.pass_context
def targets(ctx: click.Context, as_json: bool, targets_dirs: tuple[Path, ...]) -> None:
    """List the device targets (built-in and from --targets-dir)."""
    if ctx.invoked_subcommand is not None:
        ctx.obj = targets_dirs  # `targets --targets-dir D show NAME` looks in D too
        return
    registry = load_registry(extra_dirs=targets_dirs)
    items = [registry.get(name) for name in registry.names()]
    if as_json:
        emit_json([t.model_dump(mode="json") for t in items])
    else:
        render_targets(items)


@targets.command("show")
@click.argument("name")
@json_option
@targets_dir_option
@click.pass_context
def show(ctx: click.Context, name: str, as_json: bool, targets_dirs: tuple[Path, ...]) -> None:
    """Show one target with every number and its source."""
    target = load_registry(extra_dirs=(*(ctx.obj or ()), *targets_dirs)).get(name)
    if as_json:
        emit_json(target)
    else:
        render_target(target)
