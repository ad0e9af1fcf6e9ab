"""The ``edgeopt`` command group: every command registered on it (imported by :func:`edgeopt.cli.main.main` once
its signal handlers are in place, since importing the commands loads onnx, numpy and the runtimes)."""

from __future__ import annotations

import click

from .._version import __version__
from .bench_cmd import bench
from .devices_cmd import devices
from .devices_setup_cmd import setup_cmd
from .fleet_cmd import fleet
from .history_cmd import baseline, compare_cmd, history_cmd
from .inspect_cmd import inspect_cmd
from .optimize_cmd import optimize_cmd
from .profile_cmd import profile_cmd
from .qualify_cmd import qualify_cmd
from .recipes_cmd import recipes
from .sweep_cmd import sweep_cmd
from .targets_cmd import targets
from .tools_cmd import tools
from .zoo_cmd import zoo


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, prog_name="edgeopt")
def cli() -> None:
    """edgeopt: optimize a model for an edge device and prove it fits its budgets.

    Exit codes: 0 pass, 1 a budget or gate failed, 2 usage or input error, 3 device or runner error.
    """


cli.add_command(inspect_cmd)
cli.add_command(bench)
cli.add_command(targets)
cli.add_command(zoo)
cli.add_command(optimize_cmd)
cli.add_command(recipes)
cli.add_command(devices)
cli.add_command(qualify_cmd)
cli.add_command(history_cmd)
cli.add_command(compare_cmd)
cli.add_command(baseline)
cli.add_command(tools)
cli.add_command(sweep_cmd)
cli.add_command(profile_cmd)
cli.add_command(fleet)
devices.add_command(setup_cmd)
