"""Every result as cells of metric series (issue 30, item 2): each kind turns its typed result into cells through
the function its descriptor names, loaded when first used."""

from __future__ import annotations

import pytest

from edgeopt.history.codec import SAMPLES_FORMAT, VALUES_FORMAT, decode_series, encode_series
from edgeopt.metrics.cells import tensor_cells
from edgeopt.registry import get_kind
from edgeopt.registry.kind_spec import KindDescriptor, MetricSpec
from edgeopt.registry.lazy import RegistryError
from tests.synthetic_results import NO_SENSOR, bench_result, samples


def test_a_one_pass_result_is_one_unkeyed_cell_of_the_tensor_kinds_metrics():
    result = bench_result(samples(300, 2.0), power=NO_SENSOR)
    assert get_kind("tensor").load_cells() is tensor_cells
    (cell,) = tensor_cells(result)
    kind = get_kind("tensor")
    assert cell.key == "" and cell.axes == {} and cell.impossible == ()
    assert {s.metric for s in cell.series} <= {m.name for m in kind.metrics}
    for s in cell.series:
        assert s.unit == kind.metric(s.metric).unit
    latency = cell.series_of("latency_ms")
    assert list(latency.readings) == result.samples_ms and latency.summary["p99"] == result.latency_ms.p99
    assert cell.series_of("throughput_per_s").summary == {"value": result.throughput_ips}
    assert cell.series_of("throughput_per_s").readings == () and cell.series_of("nope") is None
    assert [m.name for m in kind.sampled_metrics()] == ["latency_ms"]


def test_the_generative_kind_names_its_cells_function_and_its_sampled_metrics():
    kind = get_kind("generative")
    assert kind.cells == "edgeopt.bench.llm.cells:llm_cells" and callable(kind.load_cells())
    assert [(m.name, m.min_readings) for m in kind.sampled_metrics()] == [
        ("ttft_ms", 5), ("tpot_ms", 5), ("decode_tokens_per_s", 5)]


def test_a_kind_without_cells_or_with_a_bad_path_says_so():
    toy = KindDescriptor(name="toy", summary="a toy kind", agent_command="run", rank_metric="fps",
                         metrics=(MetricSpec(name="fps", unit="frames/s", higher_is_better=True),))
    with pytest.raises(RegistryError, match="kind toy declares no cells function"):
        toy.load_cells()
    with pytest.raises(RegistryError, match="does not load"):
        toy.model_copy(update={"cells": "edgeopt.metrics.cells:nothing_here"}).load_cells()


@pytest.mark.parametrize(("values", "fmt"), [([0.014617, 1.5, 2.000001], SAMPLES_FORMAT),
                                              ([0.054903125, 1 / 3, 17024.123456789], VALUES_FORMAT),
                                              ([float("nan"), 1.0], VALUES_FORMAT)])
def test_a_series_reads_back_exactly_as_recorded(values, fmt):
    got_fmt, blob = encode_series(values)
    back = decode_series(blob, got_fmt, len(values)).tolist()
    assert got_fmt == fmt and str(back) == str(values)  # str: NaN == NaN
