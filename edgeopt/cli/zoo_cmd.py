"""``edgeopt zoo``: list and build the small reference models edgeopt ships as builders."""

from __future__ import annotations

from pathlib import Path

import click

from ..zoo import build
from ..zoo.registry import BUILD_HELP, describe
from .common import emit_json, json_option


@click.group()
def zoo() -> None:
    """Reference models built locally (random weights, real architectures)."""


@zoo.command("list")
@json_option
def list_cmd(as_json: bool) -> None:
    """List the zoo models."""
    models = describe()
    if as_json:
        emit_json(models)
        return
    for name, text in models.items():
        click.echo(f"{name:18} {text}")


@zoo.command("build", help=BUILD_HELP)
@click.argument("name")
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--train-steps", type=click.IntRange(min=10), default=None,
              help="Training steps of tiny-llama-trained [default: 400, a few minutes on 2 cores]; cached per count.")
@json_option
def build_cmd(name: str, out: Path, train_steps: int | None, as_json: bool) -> None:
    """Build zoo model NAME into OUT (its help: the zoo's BUILD_HELP)."""
    path = build(name, out, train_steps=train_steps, progress=lambda line: click.echo(line, err=True))
    if as_json:
        emit_json({"model": name, "path": str(path)})
    else:
        click.echo(f"wrote {path}", err=True)
