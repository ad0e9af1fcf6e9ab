"""``edgeopt qualify SPEC.yaml``: run a qualification spec, print the gates, write the reports.

Exit codes: 0 every gate passed on every device, 1 a gate failed, 2 spec or usage error (file:line: key),
3 a device or runner error.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..api import qualify
from .common import emit_json, json_option, targets_dir_option
from .history_options import HistoryOptions, history_options
from .progress import StderrProgress
from .qualify_render import render_qualify


@click.command("qualify")
@click.argument("spec", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--report-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where result.json, report.html, junit.xml and summary.md go [default: out/qualify/<spec name>].")
@history_options
@targets_dir_option
@json_option
def qualify_cmd(spec: Path, report_dir: Path | None, history: HistoryOptions, targets_dirs: tuple[Path, ...],
                as_json: bool) -> int:
    """Qualify a model on its devices against the gates of SPEC (docs/qualify.md).

    Exit 0 all gates pass, 1 a gate failed, 2 spec or usage error, 3 device or runner error.
    """
    with StderrProgress() as progress:
        result = qualify(
            spec,
            report_dir=report_dir,
            history_db=history.db,
            record=history.enabled,
            targets_dirs=targets_dirs,
            progress=progress,
            log=lambda message: progress.view.line(f"edgeopt: {message}"),
        )
    if as_json:
        emit_json(result.without_samples())  # raw samples stay in result.json and the history
    else:
        render_qualify(result)
    return result.exit_code
