"""The ``edgeopt`` command group: every command named here and imported on first use.

:func:`edgeopt.cli.main.main` imports this module once its signal handlers are in place. A command's module (and
what it loads: onnx, numpy, the runtimes, pydantic models) is imported only when that command runs or ``--help``
lists the commands, so ``edgeopt zoo build`` does not pay for ``qualify``'s imports (about 0.4 s of CPU per call
saved; the test suite starts the CLI a few hundred times).
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from .._version import __version__

# command name -> "module:attribute" under edgeopt.cli (a group's subcommands added by other modules: _EXTRA)
_COMMANDS: dict[str, str] = {
    "baseline": "history_cmd:baseline",
    "bench": "bench_cmd:bench",
    "compare": "history_cmd:compare_cmd",
    "devices": "devices_cmd:devices",
    "fleet": "fleet_cmd:fleet",
    "history": "history_cmd:history_cmd",
    "inspect": "inspect_cmd:inspect_cmd",
    "optimize": "optimize_cmd:optimize_cmd",
    "profile": "profile_cmd:profile_cmd",
    "qualify": "qualify_cmd:qualify_cmd",
    "recipes": "recipes_cmd:recipes",
    "sweep": "sweep_cmd:sweep_cmd",
    "targets": "targets_cmd:targets",
    "tools": "tools_cmd:tools",
    "zoo": "zoo_cmd:zoo",
}
# subcommands defined in their own module, added to their group when it is loaded
_EXTRA: dict[str, tuple[str, ...]] = {"devices": ("devices_setup_cmd:setup_cmd",)}


def _load(spec: str) -> Any:
    module, attribute = spec.split(":")
    return getattr(importlib.import_module(f".{module}", __package__), attribute)


class LazyGroup(click.Group):
    """A click group whose commands are imported when first looked up."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in _COMMANDS:
            command = _load(_COMMANDS[cmd_name])
            for extra in _EXTRA.get(cmd_name, ()):
                command.add_command(_load(extra))
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)


def preload(args: list[str]) -> None:
    """Import the command ``args`` names (all of them when none is named, as ``--help`` lists them all), so the
    caller can do it while its start-up signal handlers are in place."""
    name = next((a for a in args if not a.startswith("-")), None)
    ctx = click.Context(cli)
    for command in [name] if name in _COMMANDS else [] if name else list(_COMMANDS):
        cli.get_command(ctx, command)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, prog_name="edgeopt")
def cli() -> None:
    """edgeopt: optimize a model for an edge device and prove it fits its budgets.

    Exit codes: 0 pass, 1 a budget or gate failed, 2 usage or input error, 3 device or runner error.
    """
