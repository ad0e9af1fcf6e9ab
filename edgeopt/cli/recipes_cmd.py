"""``edgeopt recipes`` and ``edgeopt recipes show NAME``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..passes.registry import load_pass_registry
from ..recipes import RecipeError, builtin_names, load_recipe, resolve_recipe_path
from ..recipes.yaml_lines import read_yaml_with_lines
from .common import emit_json, json_option
from .optimize_render import render_recipe, render_recipes


def _describe(name: str, *, strict: bool = False) -> dict[str, Any]:
    """A recipe's summary; a recipe that cannot load here (a missing extra) is listed with the reason.

    Raises:
        RecipeError: (``strict``) the file cannot be read or is not YAML; else it is listed as unavailable.
    """
    path = resolve_recipe_path(name)
    try:
        raw = read_yaml_with_lines(path, "recipe", RecipeError)[0] or {}
    except RecipeError:
        if strict:
            raise
        raw = {}
    passes = raw.get("passes") if isinstance(raw, dict) else None
    steps = passes if isinstance(passes, list) else []
    item: dict[str, Any] = {
        "name": raw.get("name", path.stem) if isinstance(raw, dict) else path.stem,
        "path": str(path),
        "description": raw.get("description", "") if isinstance(raw, dict) else "",
        "passes": [str(s.get("pass")) for s in steps if isinstance(s, dict)],
        "formats": raw.get("formats") if isinstance(raw, dict) else None,
    }
    try:
        loaded = load_recipe(path, load_pass_registry())
        missing = [why for p in [*loaded.passes, *loaded.converters.values()] if (why := p.unavailable())]
        item["status"] = f"unavailable: {missing[0]}" if missing else "ok"
        item["config"] = [{"pass": p.name, "config": p.config.model_dump(mode="json")} for p in loaded.passes]
    except RecipeError as exc:
        item["status"] = f"unavailable: {exc}"
    return item


@click.group(invoke_without_command=True)
@json_option
@click.pass_context
def recipes(ctx: click.Context, as_json: bool) -> None:
    """List the built-in optimization recipes (a user recipe is a YAML path given to --recipe)."""
    if ctx.invoked_subcommand is not None:
        return
    items = [_describe(name) for name in builtin_names()]
    if as_json:
        emit_json(items)
    else:
        render_recipes(items)


@recipes.command("show")
@click.argument("name")
@json_option
def show(name: str, as_json: bool) -> None:
    """Show recipe NAME (or a recipe file): its YAML and every pass option with defaults filled in."""
    item = _describe(name, strict=True)
    if as_json:
        emit_json(item)
    else:
        render_recipe(item, Path(item["path"]).read_text(encoding="utf-8"))
