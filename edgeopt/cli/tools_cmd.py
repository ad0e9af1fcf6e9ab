"""``edgeopt tools list|status|install NAME``: the isolated converter environments (TFLite: TensorFlow)."""

from __future__ import annotations

import click

from ..tools import TOOLS, install_tool, tool_status
from .common import emit_json, json_option


@click.group()
def tools() -> None:
    """Isolated tool environments for converters whose dependencies conflict with edgeopt's."""


@tools.command("list")
@json_option
def list_cmd(as_json: bool) -> None:
    """List the tools and whether each is installed."""
    items = [tool_status(name) for name in TOOLS]
    if as_json:
        emit_json([s.model_dump(mode="json") for s in items])
        return
    for s in items:
        state = "stale (reinstall)" if s.stale else ("installed" if s.installed else "not installed")
        click.echo(f"{s.name:10} {state:18} {s.path}")


@tools.command("status")
@click.argument("name")
@json_option
def status_cmd(name: str, as_json: bool) -> None:
    """Show one tool env: path, pins, size on disk."""
    s = tool_status(name, measure=True)
    if as_json:
        emit_json(s.model_dump(mode="json"))
        return
    click.echo(f"{s.name}: {'installed' if s.installed else 'not installed'}{' (stale)' if s.stale else ''}")
    click.echo(f"  path: {s.path}")
    if s.size_bytes is not None:
        click.echo(f"  size: {s.size_bytes / 1e6:.0f} MB, installed in {s.install_seconds} s")
    click.echo(f"  pins: {' '.join(s.requirements)}")


@tools.command("install")
@click.argument("name")
@json_option
def install_cmd(name: str, as_json: bool) -> None:
    """Create the venv for NAME and install its pinned requirements (needs PyPI access; TFLite: ~1.5 GB)."""
    click.echo(f"installing tool {name} (this can take several minutes)...", err=True)
    s = install_tool(name)
    if as_json:
        emit_json(s.model_dump(mode="json"))
    else:
        click.echo(f"{s.name} installed in {s.path} ({(s.size_bytes or 0) / 1e6:.0f} MB, {s.install_seconds} s)")
