"""``edgeopt optimize LLM_DIR``: the LLM branch of the optimize command (edgeopt.llm.optimize; docs/llm.md)."""

from __future__ import annotations

from pathlib import Path

import click

from ..llm.optimize import optimize_llm
from .common import emit_json


def optimize_llm_cmd(model: str, target: str, recipe: str, out_dir: Path | None, targets_dirs: tuple[Path, ...],
                     as_json: bool, calib: Path | None = None) -> int:
    """Export the folder, then print the manifest (--json) or one line per runtime folder."""
    click.echo(f"exporting {model} with LLM recipe {recipe} ...", err=True)
    result = optimize_llm(model, target=target, recipe=recipe, out_dir=out_dir, targets_dirs=targets_dirs,
                          calib=calib)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        emit_json(result)
        return 0
    for art in result.artifacts:
        click.echo(f"{art.format!s:18} {art.precision.value:5} {art.size_bytes / 1e6:8.2f} MB  {art.seconds:6.1f} s  "
                   f"{art.path}")
    click.echo(f"manifest: {result.manifest_path}", err=True)
    return 0
