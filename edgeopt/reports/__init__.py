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

RENDERERS: dict[str, tuple[str, Callable[[QualifyResult], str]]] = {
    "json": ("result.json", render_json),
    "html": ("report.html", render_html),
    "junit": ("junit.xml", render_junit),
    "markdown": ("summary.md", render_markdown),
}


def write_reports(result: QualifyResult, out_dir: str | Path) -> dict[str, Path]:
    """Render every format and write each file atomically (temp file + rename) into ``out_dir``.

    Every format is rendered before the first file is written, so a rendering bug leaves the old reports whole.
    """
    out = Path(out_dir)
    texts = {fmt: (name, render(result)) for fmt, (name, render) in RENDERERS.items()}
    paths = {}
    for fmt, (name, text) in texts.items():
        atomic_write_text(out / name, text)
        paths[fmt] = out / name
    return paths


__all__ = ["RENDERERS", "render_html", "render_json", "render_junit", "render_markdown", "write_reports"]
