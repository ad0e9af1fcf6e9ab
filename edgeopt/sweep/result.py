"""Typed result of a sweep (also ``sweep.json``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..deploy import ShippedCheck
from ..deploy.schema import LayerRepair


class Level(BaseModel):
    """One (recipe, runtime) configuration measured on the target."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    recipe: str = Field(description="Recipe name; 'fp32' is the original model; 'int8-search' the tuned INT8.")
    runtime: str
    runtime_version: str
    artifact: str = Field(description="Model file measured.")
    size_bytes: int
    latency_ms: float = Field(description="Latency on the target, ms: the median of the per-round medians of "
                              "latency_confirm_rounds short interleaved rounds, or (single_run) one run's p50.")
    latency_ms_p99: float
    memory_mb_peak: float | None = Field(
        description="Peak RSS of a fresh agent process that loaded and ran this level, MiB (memory_source says "
        "which run); None: not measured (docs/sweep.md 'How latencies are measured').")
    energy_mj: float | None = Field(description="Energy per inference, mJ (measured or estimate).")
    energy_source: str | None
    metric: str
    metric_value: float = Field(description="The metric of this config (vs labels or the reference).")
    retention: float = Field(description="metric(optimized) / metric(reference); docs/sweep.md.")
    meets_retention: bool
    meets_budget: bool = Field(description="Valid run and within the FPS budget (when one is set).")
    passed: bool = Field(description="meets_retention and meets_budget.")
    valid: bool
    cached: bool = Field(description="Read from the cache instead of re-run.")
    no_change: bool = Field(default=False, description="The recipe's artifact computes the same graph as the model "
                            "(shown as 'no change (= fp32)'); never recommended under the recipe's name.")
    negligible_change: bool = Field(
        default=False, description="The level changes a negligible share of the model: change_share_size and "
        "change_share_macs both below 5 % (e.g. INT4 weight-only touching only a CNN's final FC layer); shown "
        "'negligible change (~ fp32)', it never wins a tie within noise over another level (docs/sweep.md).")
    change_share_size: float | None = Field(
        default=None, description="|1 - size / the fp32 level's size| on the same runtime; None: not compared "
        "(fp32 itself, a no-change level, other runtime options than the fp32 level's).")
    change_share_macs: float | None = Field(
        default=None, description="Share of the model's MACs the artifact computes in another precision than FP32 "
        "(quantized or low-bit ops, float16/bfloat16 inputs); None: not counted (only read when "
        "change_share_size is below 5 %; not ONNX; shapes not static).")
    latency_ms_round_median: float | None = Field(
        default=None, description="Median of the per-round medians of the interleaved ranking rounds, ms; None "
        "when the level was not ranked (not a candidate).")
    latency_ms_low: float | None = Field(default=None, description="Lower bound of its 95 % bootstrap interval, ms.")
    latency_ms_high: float | None = Field(default=None, description="Upper bound of that interval, ms.")
    latency_rounds: int = Field(default=0, description="Interleaved ranking rounds measured (0: not ranked).")
    # -- how latency_ms was measured and under what load (docs/sweep.md "How latencies are measured") --
    latency_ms_first_pass: float | None = Field(
        default=None, description="The level's first measurement, ms: the median of its first interleaved rounds, or "
        "the p50 of its single first benchmark where it had one (kept beside latency_ms, which later rounds refine).")
    latency_confirm_rounds: int = Field(
        default=0, description="Short interleaved rounds behind latency_ms (0: not confirmed, see single_run).")
    single_run: bool = Field(
        default=False, description="latency_ms is one short run, not confirmed in interleaved rounds: shown marked "
        "and used for no decision.")
    confirm_round_medians_ms: list[float] | None = Field(
        default=None, description="The median of each of the level's confirmation rounds, ms, in the order they "
        "ran (None: not confirmed in rounds). With confirm_rounds_id, what the INT8 search's cost gate pairs.")
    confirm_rounds_id: str | None = Field(
        default=None, description="The confirmation rounds the level ran in: levels with the same id ran once in "
        "each of the same rounds, so their round medians pair (docs/sweep.md 'The cost gate').")
    host_cpu_busy_pct: float | None = Field(
        default=None, description="Most CPU time other processes took while this level was timed (its runs' "
        "maximum), % of the machine's cores; None where the agent cannot read /proc/stat.")
    interference: bool = Field(
        default=False, description="host_cpu_busy_pct reached the interference threshold: the latency may be "
        "inflated by other work on the machine.")
    first_pass_agent: str | None = Field(
        default=None, description="Where latency_ms_first_pass was measured: 'served' (the sweep's served agent, "
        "the process of the confirmation and ranking rounds) or 'fresh' (a one-shot agent process: no served "
        "agent, or the device's agent could not serve and the runner fell back to one-shot runs); None: cached "
        "before it was recorded.")
    memory_source: str | None = Field(
        default=None, description="Where memory_mb_peak and cold_start_ms come from: 'first_pass' (the first pass "
        "ran in a fresh agent), 'fresh_probe' (a short fresh agent: load and a few inferences, no timed loop); "
        "None: not measured.")
    cold_start_ms: float | None = Field(
        default=None, description="Model load + first inference in a fresh agent process, ms (memory_source's "
        "run); None: not measured.")
    details: dict[str, Any] = Field(default_factory=dict, description="Extra facts (e.g. INT8 search choices).")
    # What a deployment of this level needs (issue 21: what is measured is what ships).
    runtime_options: dict[str, Any] | None = Field(
        default=None, description="Every runtime option in effect when it was measured (the sweep's for the "
        "runtime with the level's own on top, e.g. OpenVINO inference_precision); None: a level cached before "
        "it was recorded (details.effective_runtime_options then).")
    threads: int | None = Field(default=None, description="Intra-op threads it was measured with; None: cached "
                                "before it was recorded (the sweep's threads).")


class Recommendation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    recipe: str
    runtime: str
    artifact: str
    retention: float
    latency_ms: float
    size_bytes: int
    runtime_options: dict[str, Any] | None = Field(
        default=None, description="Every runtime option the recommended level ran with (its deployment's).")
    deployment: str | None = Field(
        default=None, description="The folder holding its model file(s) and deployment.json (<out>/recommended); "
        "None when it could not be written.")
    shipped_check: ShippedCheck | None = Field(
        default=None, description="Retention re-computed from the shipped files alone, and with the runtime's "
        "defaults (docs/sweep.md, 'Deploying the recommendation').")
    reason: str | None = Field(default=None, description="The rule that decided, e.g. 'bf16@openvino: "
                               "int8-search@openvino is slower and less accurate (dominated)' (docs/sweep.md).")
    off_frontier: str | None = Field(
        default=None, description="Why the recommendation is not on the printed Pareto frontier (pareto), in one "
        "line, e.g. a faster level the ranking rounds could not tell apart from it; None: it is on the frontier.")
    ceiling: str | None = Field(
        default=None, description="The all-INT8 ceiling on its runtime and the share of that speedup captured, with "
                                  "what its float nodes cost (sweep.rank.ceiling); null without an int8 level there.")


class Int8Trial(BaseModel):
    """One device trial of the accuracy-aware INT8 search."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trial: int = Field(description="Trial number, from 0, in the order run.")
    label: str = Field(description="What was tried: a quantizer variant, optionally '+ N float nodes'.")
    config: dict[str, Any] = Field(description="quantize_int8 pass config (nodes_to_exclude: nodes kept in float).")
    retention: float = Field(description="Retention measured on the device (docs/sweep.md).")
    latency_ms: float = Field(description="p50 latency on the device, ms.")
    passed: bool = Field(description="Meets the retention threshold and the budget.")
    artifact: str = Field(description="Model file measured.")
    runtime: str = Field(default="", description="Runtime the trial ran on.")
    precision: str | None = Field(default=None, description="The float parts' precision when the runtime's low "
                                  "precision (e.g. 'bf16': its default options), not the f32 reference's; None: f32.")


class SensitivityRow(BaseModel):
    """How much one node costs when it alone is quantized (host proxy, a few samples)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    node: str = Field(description="Graph node name.")
    retention_lost: float = Field(description="1 - retention with only this node quantized.")
    rel_err: float = Field(description="Relative L2 error of the selected output vs the float model.")


class HostCheck(BaseModel):
    """One host-side check of a float-node set while narrowing the exclusion set."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    float_nodes: int = Field(description="How many nodes were kept in float.")
    retention: float = Field(description="Retention on the host (onnxruntime CPU).")
    rel_err: float = Field(description="Relative L2 error of the selected output vs the float model.")


class Int8SearchResult(BaseModel):
    """What the accuracy-aware INT8 search tried and chose (``sweep.json``'s ``int8_search``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    runtime: str = Field(description="Runtime the trials ran on.")
    trials: list[Int8Trial] = Field(description="Every device trial, in order.")
    chosen: Int8Trial | None = Field(description="The fastest passing trial; None when none passed.")
    sensitivity: list[SensitivityRow] = Field(description="The 20 most sensitive nodes, most sensitive first.")
    host_checks: list[HostCheck] = Field(description="Host-side checks while narrowing the float set.")
    quantized_nodes: int = Field(description="Quantized nodes ranked by sensitivity.")
    float_nodes: list[str] = Field(description="Nodes the chosen config keeps in float.")
    latency_cost_ms_vs_naive_int8: float | None = Field(
        description="Chosen p50 minus the first (default) variant's p50, ms; None without a chosen trial.")
    best_model: str | None = Field(description="best.onnx: the fastest passing model, else the most accurate.")
    best_model_passed: bool = Field(description="Whether best.onnx passed.")
    seconds: float = Field(description="Wall time of the search, s.")
    runtimes: list[str] = Field(default_factory=list, description="INT8 runtimes searched with per-layer gains.")
    chosen_by_runtime: dict[str, Int8Trial] = Field(
        default_factory=dict, description="The passing latency-aware float set found on each runtime.")
    float_sets: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Per runtime: strategy (narrow/grow/none), device evaluations, float "
        "nodes, and whether per-layer gains were profiled.")
    chosen_low_precision_by_runtime: dict[str, Int8Trial] = Field(
        default_factory=dict, description="Per runtime with a low-precision branch: the passing INT8 mix run with "
        "low-precision float parts (level 'int8-search+bf16'), docs/sweep.md.")
    low_precision_float_sets: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Per runtime: the low-precision branch's float set search, as float_sets.")
    skipped_runtimes: dict[str, str] = Field(
        default_factory=dict, description="INT8 runtimes given no latency-aware search, each with why: its full INT8 "
        "model is already clearly slower than a passing level (docs/sweep.md).")
    range_repair: dict[str, Any] | None = Field(
        default=None, description="The per-tensor range repair (docs/sweep.md): methods calibrated, whole-model and "
        "per-tensor host retentions, the method chosen per tensor and why; None when it did not run.")
    nncf_repairs: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Per NNCF runtime: NNCF's repairs tried on the host (bias correction, "
        "range estimator, SmoothQuant), their host retention and which one was confirmed on the device.")
    layers_by_runtime: dict[str, list[LayerRepair]] = Field(
        default_factory=dict, description="Per runtime: the adopted INT8 config layer by layer, what was done and why.")
    cost_gate: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Per INT8 runtime: its INT8 ceiling (the plain int8 level) against the "
        "fastest passing level, the headroom (ms) and whether an INT8 model there can still beat it; decisions: "
        "per step (range_repair, nncf_repair, float_set) whether it ran or was skipped/stopped and why "
        "(docs/sweep.md, 'The cost gate').")
    phase_seconds: dict[str, float] = Field(
        default_factory=dict, description="Seconds per phase of the search (variants, calibration, range_repair, "
        "nncf_repair, gains_profile, float_set_evals, device_trials, sensitivity, narrow, adopt, ...), each without "
        "the phases nested in it, so they add up to ``seconds``; host_checks_within: the host checks' share of them.")
    work: dict[str, int] = Field(
        default_factory=dict, description="What the search did, counted (docs/sweep.md, 'What the search reuses "
        "and skips'): quantize_builds (quantize_int8 runs), calibrations (those of them that ran the calibrator: no "
        "cached ranges), gain_profiles (per-layer gains profiled on the device, not read from the gains cache), "
        "device_evaluations (float-set candidates evaluated on the device), device_trials (trials measured, not "
        "read from the level cache), host_checks (host-side scorings).")


class SweepResult(BaseModel):
    """The table, the frontier, and the recommendation (null with ``reason`` when nothing meets the constraints)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    model_sha256: str
    target: str
    runner: str
    metric: str
    output: str
    eval_samples: int
    min_retention: float
    fps: float | None
    objective: str
    runtimes: list[str]
    levels: list[Level]
    pareto: list[Level]
    recommendation: Recommendation | None
    reason: str | None = Field(description="Why there is no recommendation: the binding constraint.")
    int8_search: Int8SearchResult | None = Field(
        description="What the accuracy-aware INT8 search tried, when it ran.")
    plot: str | None
    out_dir: str
    seconds: float
    warnings: list[str]
    metric_params: dict[str, Any] = Field(
        default_factory=dict, description="The metric's parameters in effect (axis, score_threshold, ...: defaults "
        "filled in); part of every level's cache key.")
    threads: int = Field(default=0, description="Runtime intra-op threads of every level on every runtime.")
    streams: int = Field(default=1, description="Concurrent inference streams of every benchmark.")
    batch: int = Field(default=1, description="Batch size of every benchmark.")
    ranking: dict[str, Any] | None = Field(
        default=None, description="How the recommendation was ranked: rounds, seconds per run, tolerance, "
        "the interleaved candidates and the decision's reason; None when no latency ranking ran.")
    eval_cannot_tell: str | None = Field(
        default=None, description="Set when the eval data cannot tell levels apart (the reference predicts one "
        "class for every sample, a constant map, a constant output): why, in one line. Every level then scores "
        "alike and the recommendation's retention is 'untested by this data' (docs/sweep.md).")
    history_run_ids: list[int] = Field(
        default_factory=list, description="Its freshly measured levels' runs in the history (kind sweep; with "
        "--history-db), as the LLM sweep and the fleet rows list theirs.")
