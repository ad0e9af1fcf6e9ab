"""One-pass graph models (ONNX, OpenVINO IR, TFLite, Core ML, TensorRT): timed per inference by the agent's
``run`` command, ranked by median latency."""

from __future__ import annotations

from ..kind_spec import KindDescriptor, MetricSpec

_PCT = ("p50", "p90", "p95", "p99", "p999")

DESCRIPTOR = KindDescriptor(
    name="tensor",
    summary="one-pass graph model (image, tensor in, tensor out), timed per inference",
    agent_command="run",
    metrics=(
        MetricSpec(name="latency_ms", unit="ms", percentiles=_PCT, min_exclusive=True, sampled=True),
        MetricSpec(name="throughput_per_s", unit="inferences/s", higher_is_better=True, min_exclusive=True),
        MetricSpec(name="memory_mb", unit="MiB"),
        MetricSpec(name="size_mb", unit="MiB", min_exclusive=True),
        MetricSpec(name="energy_mj", unit="mJ"),
        MetricSpec(name="retention", unit="ratio", higher_is_better=True, max_value=2.0),
        MetricSpec(name="load_ms", unit="ms"),
        MetricSpec(name="layer_ms", unit="ms"),  # one layer's time in a profile
        MetricSpec(name="power_w", unit="W"),
    ),
    rank_metric="latency_ms",
    gates=("latency", "fps", "deadline_miss", "memory", "model_size", "retention", "energy", "cold_start",
           "throughput", "regression"),
    model_word="a one-pass model (not an LLM folder)",
    run_word="a one-pass run",
    engine="tensor",
    cells="edgeopt.metrics.cells:tensor_cells",
    history_row="edgeopt.history.bench_runs:tensor_facts",
    history_result="edgeopt.history.bench_runs:tensor_result_of",
    bench_cli="edgeopt.cli.bench_tensor:bench_tensor",
    bench_api="edgeopt.bench.api:benchmark_tensor",
    qualify="edgeopt.qualify.engine:run_tensor_qualification",
    qualify_check="edgeopt.qualify.kind_check:tensor_problem",
    sweep_cli="edgeopt.cli.sweep_cmd:sweep_tensor",
    sweep_api="edgeopt.sweep.api:sweep_tensor",
    optimize_cli="edgeopt.cli.optimize_cmd:optimize_tensor",
    optimize_api="edgeopt.optimize.api:optimize_tensor",
)
