"""Reports of a qualification, one module per format, each written atomically into the report directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..fsutil import atomic_write_text
from ..qualify.result import QualifyResult
from .html_report import render_html
from .json_report import render_json
from .junit import render_junit
from .markdown import render_markdown

# Format -> (file name in the report directory, renderer). A new report format is one module and one entry here.
RENDERERS: dict[str, tuple[str, Callable[[QualifyResult], str]]] = {
    "json": ("result.json", render_json),
    "html": ("report.html", render_html),
    "junit": ("junit.xml", render_junit),
    "markdown": ("summary.md", render_markdown),
}


def report_paths(out_dir: str | Path) -> dict[str, Path]:
    """Where :func:`write_reports` puts each format in ``out_dir`` (a result lists them before they are written)."""
    return {fmt: Path(out_dir) / name for fmt, (name, _) in RENDERERS.items()}


def write_reports(result: QualifyResult, out_dir: str | Path) -> dict[str, Path]:
    """Render every format and write each file atomically (temp file + rename) into ``out_dir``.

    Every format is rendered before the first file is written, so a rendering bug leaves the old reports whole.
    """
    texts = {fmt: render(result) for fmt, (_, render) in RENDERERS.items()}
    paths = report_paths(out_dir)
    for fmt, text in texts.items():
        atomic_write_text(paths[fmt], text)
    return paths


__all__ = [
    "RENDERERS", "render_html", "render_json", "render_junit", "render_markdown", "report_paths", "write_reports",
]
