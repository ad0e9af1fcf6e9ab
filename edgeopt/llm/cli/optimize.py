"""``edgeopt optimize LLM_DIR``: the generative kind's ``optimize_cli`` entry (edgeopt.llm.optimize; docs/llm.md)."""

from __future__ import annotations

from pathlib import Path

import click

from ...cli.common import emit_json
from ...cli.optimize_call import OptimizeCall
from ...registry import KindDescriptor
from ...untrusted import clean_text
from ..optimize import LlmOptimizeResult, optimize_llm


def optimize_generative(kind: KindDescriptor, c: OptimizeCall) -> int:
    """The generative kind's ``optimize_cli`` entry: ``edgeopt optimize``'s options to :func:`optimize_llm_cmd`
    (runtime folders per LLM recipe block)."""
    return optimize_llm_cmd(c.model, c.target, c.recipe, c.out_dir, c.targets_dirs, c.as_json, c.calib)


def optimize_llm_cmd(model: str, target: str, recipe: str, out_dir: Path | None, targets_dirs: tuple[Path, ...],
                     as_json: bool, calib: Path | None = None) -> int:
    """Export the folder, then print the manifest (--json) or one line per runtime folder."""
    click.echo(f"exporting {model} with LLM recipe {recipe} ...", err=True)
    result = optimize_llm(model, target=target, recipe=recipe, out_dir=out_dir, targets_dirs=targets_dirs,
                          calib=calib)
    if as_json:
        for warning in result.warnings:
            click.echo(f"warning: {clean_text(warning)}", err=True)
        emit_json(result)
        return 0
    render_llm_optimize(result)
    return 0


def render_llm_optimize(result: LlmOptimizeResult) -> None:
    """The warnings (stderr), one line per runtime folder, the manifest's path; every line cleaned: names, paths
    and warnings come from the model folder and the exporters (edgeopt.untrusted)."""
    for warning in result.warnings:
        click.echo(f"warning: {clean_text(warning)}", err=True)
    for art in result.artifacts:
        click.echo(clean_text(f"{art.format!s:18} {art.precision.value:5} {art.size_bytes / 1e6:8.2f} MB  "
                              f"{art.seconds:6.1f} s  {art.path}"))
    click.echo(clean_text(f"manifest: {result.manifest_path}"), err=True)
