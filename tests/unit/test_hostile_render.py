"""Every string shown is data: results of every kind, with a hostile string in EVERY string field (found by walking
the pydantic schemas, not listed by hand), rendered by the terminal tables and the reports, show no ESC, no rich
markup effect and no raw HTML. docs/reliability.md, "Untrusted device: new surfaces". The generator and the checks
are tests/hostile_kit.py; tests/unit/test_hostile_reports.py walks every other kind and renderer with them."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from tests import hostile_kit as hk
from tests.synthetic_results import bench_result


@pytest.fixture()
def hostile_bench():
    result = hk.hostile(type(bench_result()), bench_result())
    assert hk.strings(result) > 20
    return result


def test_the_bench_table(hostile_bench, capsys):
    from edgeopt.cli.render import render_bench

    render_bench(hostile_bench)
    hk.terminal_ok(capsys.readouterr().out, "render_bench")


def test_llm_tables():
    from edgeopt.bench.llm.render import render_llm_bench
    from edgeopt.bench.llm.result import LlmBenchResult

    result = hk.hostile(LlmBenchResult)
    assert hk.strings(result) > 20
    console = Console(file=io.StringIO(), force_terminal=True, width=4000, highlight=False)
    render_llm_bench(result, console)
    hk.terminal_ok(console.file.getvalue(), "render_llm_bench")  # type: ignore[attr-defined]
