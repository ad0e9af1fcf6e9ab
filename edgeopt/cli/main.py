"""Entry point: the command group and the one place where errors become exit codes.

Exit codes (docs/exit-codes.md): 0 pass, 1 a budget or gate failed, 2 usage or input error,
3 device or runner error.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Sequence

import click

from .._version import __version__
from ..errors import EdgeoptError, ExitCode
from .bench_cmd import bench
from .devices_cmd import devices
from .devices_setup_cmd import setup_cmd
from .fleet_cmd import fleet
from .history_cmd import baseline, compare_cmd, history_cmd
from .inspect_cmd import inspect_cmd
from .json_out import emit_json, stdout_reserved_for_json
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


def _fail(message: str, code: int, as_json: bool) -> int:
    click.echo(f"edgeopt: error: {message}", err=True)
    if as_json:
        emit_json({"error": message, "exit_code": code})
    return code


class Terminated(BaseException):
    """SIGTERM arrived: unwinds like Ctrl-C (sessions closed, local agents stopped, temp files removed)."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code (never a traceback for an expected error)."""
    args = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in args
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        with stdout_reserved_for_json() if as_json else contextlib.nullcontext():
            rv = cli.main(args=args, prog_name="edgeopt", standalone_mode=False)
    except EdgeoptError as exc:
        return _fail(str(exc), int(exc.exit_code), as_json)
    except click.exceptions.Abort as exc:  # click turns Ctrl-C into Abort
        if isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):
            return _fail("interrupted", 130, as_json)
        return _fail("aborted", int(ExitCode.USAGE), as_json)
    except click.ClickException as exc:
        return _fail(exc.format_message(), int(ExitCode.USAGE), as_json)
    except KeyboardInterrupt:
        return _fail("interrupted", 130, as_json)
    except Terminated:
        return _fail("terminated (SIGTERM); the device's agent stops itself, run again to resume", 143, as_json)
    return int(rv or 0)


if __name__ == "__main__":
    sys.exit(main())
