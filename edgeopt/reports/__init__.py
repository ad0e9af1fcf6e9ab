"""Reports of a qualification, one module per format, each written atomically into the report directory."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..fsutil import atomic_write_text

if TYPE_CHECKING:
    from ..qualify.result import QualifyResult


class _Lazy:
    """A renderer named by its module and function, imported on first call.

    So ``import edgeopt.reports`` (or its leaf ``svg`` module, which the sweep's plot uses) loads neither the
    qualify result nor any renderer.
    """

    def __init__(self, module: str, function: str) -> None:
        self.module = module
        self.function = function

    def load(self) -> Callable[[QualifyResult], str]:
        renderer: Callable[[QualifyResult], str] = getattr(
            importlib.import_module(f"{__name__}.{self.module}"), self.function)
        return renderer

    def __call__(self, result: QualifyResult) -> str:
        return self.load()(result)


# Format -> (file name in the report directory, renderer). A new report format is one module and one entry here.
RENDERERS: dict[str, tuple[str, Callable[[QualifyResult], str]]] = {
    "json": ("result.json", _Lazy("json_report", "render_json")),
    "html": ("report.html", _Lazy("html_report", "render_html")),
    "junit": ("junit.xml", _Lazy("junit", "render_junit")),
    "markdown": ("summary.md", _Lazy("markdown", "render_markdown")),
}
# The renderers by their function names, as this package has always exported them (loaded on first access).
_EXPORTED = {r.function: r for _, r in RENDERERS.values() if isinstance(r, _Lazy)}


def __getattr__(name: str) -> Any:
    """``render_html`` and the other renderers, imported when first asked for (a submodule such as ``svg`` is
    found by the import system, not here)."""
    if name in _EXPORTED:
        value = _EXPORTED[name].load()
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
