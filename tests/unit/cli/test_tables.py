"""Tables for real terminals (issue 16, item 8): at 80 columns no number of the optimize table is cut, `targets`
fits 120 columns without each row wrapping over many lines, `history` shows human units."""

from __future__ import annotations

import io
import re

from rich.console import Console

from edgeopt.cli.history_render import render_runs
from edgeopt.cli.optimize_render import render_optimize
from edgeopt.cli.render import render_targets
from edgeopt.history import HistoryStore
from edgeopt.optimize import OptimizeResult
from edgeopt.optimize.fidelity import FidelityRow
from edgeopt.passes.base import Artifact
from edgeopt.targets import load_registry
from tests.synthetic_results import bench_result, samples

CUT = re.compile(r"\d…|…\d|\.…")  # a number cut by rich's ellipsis: "4,…", "0.…"


def _console(width: int) -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, width=width, highlight=False, color_system=None), buf


def _artifact(name: str, pass_name: str | None, size: int) -> Artifact:
    return Artifact(name=name, path=f"/out/{name}.onnx", format="onnx", precision="int8" if pass_name else "fp32",
                    sha256="ab" * 32, size_bytes=size, pass_name=pass_name, seconds=12.3456 if pass_name else 0.0)


def _row(name: str, size: int, speedup: float | None) -> FidelityRow:
    return FidelityRow(artifact=name, path=f"/out/{name}.onnx", precision="int8", size_bytes=size,
                       size_ratio=0.2534, samples=64, data="calibration", max_abs_error=0.0123456,
                       mean_abs_error=0.001, cosine_similarity=0.9987654, top1_agreement=0.984375, accuracy=0.9123,
                       latency_ms_p50=4.56789, speedup=speedup)


def optimize_result() -> OptimizeResult:
    model = _artifact("input", None, 14_123_456)
    arts = [_artifact("1-cleanup", "cleanup", 14_000_000), _artifact("2-quantize_int8", "quantize_int8", 3_600_000)]
    rows = [_row("input", 14_123_456, 1.0), _row("1-cleanup", 14_000_000, 1.012), _row("2-quantize_int8",
                                                                                         3_600_000, 2.345)]
    return OptimizeResult(edgeopt_version="0.1.0", started_at="2026-01-01T00:00:00+00:00", seconds=30.0,
                          model=model, target="rpi5", recipe="int8", recipe_source="recipes/int8.yaml",
                          formats=["onnx"], out_dir="/out", manifest_path="/out/manifest.json", artifacts=arts,
                          calibration=None, fidelity=rows, warnings=[])


def test_optimize_table_at_80_columns_cuts_no_number():
    console, buf = _console(80)
    render_optimize(optimize_result(), console)
    text = buf.getvalue()
    assert not CUT.search(text), text
    assert max(len(line) for line in text.splitlines() if line[:1] in "┏┃┡│└") <= 80
    assert "13.5 MiB" in text and "0.99877" in text and "2.35x" in text  # whole numbers, human sizes
    assert "left out at 80 columns" in text


def test_targets_fit_120_columns_without_tall_rows():
    targets = load_registry().all()
    console, buf = _console(120)
    render_targets(targets, console)
    text = buf.getvalue()
    assert not CUT.search(text) and max(len(line) for line in text.splitlines() if line[:1] in "┏┃┡│└") <= 120
    body = [line for line in text.splitlines() if line.startswith("│")]
    assert len(body) <= 3 * len(targets) + 2, text  # at most ~3 lines per target (was ~10)


def test_history_shows_human_units(tmp_path):
    store = HistoryStore(tmp_path / "h.sqlite3")
    store.record(bench_result(samples(200, 0.0697)))  # ~14,340 inferences/s
    console, buf = _console(150)
    render_runs(store.runs(), store.path, console)
    text = buf.getvalue()
    assert "e+0" not in text and "e-0" not in text and re.search(r"\b14,\d{3}\b", text), text
