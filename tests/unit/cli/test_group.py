"""The command group imports a command's module only when that command is used."""

from __future__ import annotations

import subprocess
import sys

import click

from edgeopt.cli.group import _COMMANDS, cli


def test_every_named_command_loads_under_its_own_name():
    ctx = click.Context(cli)
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        assert command is not None and command.name == name, name
    assert set(_COMMANDS) <= set(cli.list_commands(ctx))
    assert "setup" in cli.get_command(ctx, "devices").commands  # type: ignore[union-attr]


def test_a_light_command_does_not_import_the_heavy_ones():
    code = ("import sys; from edgeopt.cli.main import main; rc = main(['zoo', 'list']); "
            "heavy = [m for m in ('edgeopt.qualify', 'edgeopt.sweep', 'edgeopt.bench', 'onnxruntime') "
            "if m in sys.modules]; print(heavy); sys.exit(rc)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout
