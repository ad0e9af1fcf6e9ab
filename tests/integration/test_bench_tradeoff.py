"""``edgeopt bench --batch 1,2,4,8 --threads 1,2`` (issue 16, item 12): each value measured in one command, the
latency/throughput trade-off printed, a plot in the HTML page; a repeated --threads is an error (item 10)."""

from __future__ import annotations

import json
import re

import pytest

from edgeopt.reports import svg
from tests.cli_here import edgeopt_here as edgeopt

# 120 inferences however fast the machine: p99 needs 100 samples, and 0.1 s of a loaded 2-vCPU machine gave 93
# (exit 1: the run too short for its p99)
COMMON = ("--target", "local", "--no-budget", "-n", "120", "--min-duration", "0.1", "--warmup", "2", "--no-energy",
          "--no-history")


def test_batch_and_threads_lists_measure_each_pair_and_write_the_plot(tiny_cnn, tmp_path):
    page = tmp_path / "tradeoff.html"
    p = edgeopt("bench", str(tiny_cnn), "--batch", "1,4", "--threads", "1,2", *COMMON, "--html", str(page), "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert [(pt["threads"], pt["batch"]) for pt in r["points"]] == [(1, 1), (1, 4), (2, 1), (2, 4)]
    assert [res["settings"]["batch"] for res in r["results"]] == [1, 4, 1, 4]
    for pt, res in zip(r["points"], r["results"], strict=True):
        assert pt["throughput_ips"] == pytest.approx(res["throughput_ips"])
        assert pt["latency_ms_per_item"] == pytest.approx(res["latency_ms"]["p50"] / pt["batch"])
    best = r["points"][r["best_throughput"]]
    assert best["throughput_ips"] == max(pt["throughput_ips"] for pt in r["points"] if pt["valid"])
    assert "real time: batch" in r["summary"] and "throughput: batch" in r["summary"]
    html = page.read_text()
    assert "<svg" in html and "p99 latency per call (ms)" in html and html.count('class="pt') == 4
    chart = re.search(r"<svg.*?</svg>", html, re.S)
    assert chart is not None and svg.standalone(chart.group(0)).startswith("<?xml")


def test_tradeoff_table_on_a_terminal(tiny_cnn):
    p = edgeopt("bench", str(tiny_cnn), "--batch", "1,2", *COMMON)
    assert p.returncode == 0, p.stderr
    assert "latency / throughput" in p.stdout and "real time: batch" in p.stdout and "items/s" in p.stdout


@pytest.mark.parametrize("args,needle", [
    (("--threads", "1", "--threads", "2"), "--threads: given 2 times"),
    (("--batch", "2", "--batch", "4"), "--batch: given 2 times"),
    (("--batch", "0,2"), "0 < 1"),
    (("--shape", "input=1x3x32x32", "--shape", "input=2x3x32x32"), "'input' is given twice"),
])
def test_repeated_or_bad_values_exit_2(tiny_cnn, args, needle):
    p = edgeopt("bench", str(tiny_cnn), *args, *COMMON)
    assert p.returncode == 2 and needle in p.stderr, p.stderr
