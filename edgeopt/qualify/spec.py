"""The typed qualification spec: what to qualify, where, on which data, and the gates it must pass.

Every model is frozen and strict (unknown keys are errors, with file:line from :mod:`edgeopt.qualify.loader`).
Reference with examples: ``docs/qualify.md``. Sizes and memory are in MiB (2**20 bytes), like ``memory_mb`` in
bench results.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator, model_validator

from ..evaluation.spec import MetricSpec
from ..metrics.latency import percentile_key
from ..settings import (
    MAX_BATCH,
    MAX_DURATION_S,
    MAX_FPS,
    MAX_ITERATIONS,
    MAX_SEED,
    MAX_STREAMS,
    MAX_THREADS,
    MAX_WARMUP,
)
from .costs import CostSettings

SPEC_VERSION = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)  # every number finite (.inf: exit 2)


def _percentile(value: str) -> str:
    try:
        return percentile_key(str(value))
    except ValueError as exc:
        raise ValueError(str(exc)) from None


# -- gates -------------------------------------------------------------------------------------------------------
class LatencyGate(_Strict):
    """Latency at a percentile must be at most ``max_ms``."""

    percentile: str = Field(default="p99", description="p50, p90, p95, p99 or p999.")
    max_ms: float = Field(gt=0, description="Largest allowed latency at that percentile, ms.")

    _pct = field_validator("percentile")(_percentile)


class FpsGate(_Strict):
    """Latency at a percentile must fit one frame at ``fps`` (``1000 / fps`` ms)."""

    fps: float = Field(gt=0, description="Frames per second to sustain.")
    percentile: str = Field(default="p99", description="p50, p90, p95, p99 or p999.")

    _pct = field_validator("percentile")(_percentile)


class DeadlineMissGate(_Strict):
    """Under frame-paced load at ``fps``, at most ``max_pct`` % of frames may finish after their deadline."""

    fps: float = Field(gt=0, le=MAX_FPS,
                       description="Frame rate of the paced load; each frame's deadline is 1000/fps ms.")
    max_pct: float = Field(ge=0, le=100, description="Largest allowed share of late frames, percent (the frames it "
                           f"needs, 100/max_pct, at most {MAX_ITERATIONS:,}).")
    frames: int | None = Field(default=None, ge=1, le=MAX_ITERATIONS,
                               description="Frames to issue (default: enough to resolve max_pct, >= 100); fewer than "
                                           "that cannot pass.")


class MemoryGate(_Strict):
    """Peak memory must be at most ``max_mb`` MiB."""

    max_mb: float = Field(gt=0, description="Largest allowed peak memory, MiB.")
    basis: Literal["model", "process"] = Field(default="model",
        description="model: what loading and running the model added to the process (memory_mb.delta); "
        "process: the whole agent process's peak RSS (memory_mb.peak, includes the interpreter).")


class ModelSizeGate(_Strict):
    """The qualified model file (external data included) must be at most ``max_mb`` MiB."""

    max_mb: float = Field(gt=0, description="Largest allowed model size on disk, MiB.")


class RetentionGate(_Strict):
    """metric(optimized) / metric(reference) must be at least ``min_ratio`` (accuracy with labels, else top-1
    agreement with the reference)."""

    min_ratio: float = Field(gt=0, le=2, description="Smallest allowed retention, e.g. 0.99 for 99 %.")


class EnergyGate(_Strict):
    """Energy per inference must be at most ``max_mj``; a gate on an ESTIMATE says so in its verdict."""

    max_mj: float = Field(gt=0, description="Largest allowed energy per inference, mJ.")
    require_measured: bool = Field(default=False, description="Fail when the energy is an estimate (no power sensor).")


class ColdStartGate(_Strict):
    """Model load plus first inference must take at most ``max_ms``."""

    max_ms: float = Field(gt=0, description="Largest allowed cold start, ms.")


class ThroughputGate(_Strict):
    """Throughput must be at least ``min_ips`` items per second."""

    min_ips: float = Field(gt=0, description="Smallest allowed throughput, items per second.")


class RegressionGate(_Strict):
    """Latency must not regress against a stored baseline beyond ``tolerance_pct`` (docs/history.md)."""

    baseline: str = Field(min_length=1, description="Baseline name in the history (edgeopt baseline set).")
    tolerance_pct: float = Field(default=5.0, ge=0, description="Median slowdown tolerated, percent.")
    alpha: float = Field(default=0.05, gt=0, lt=1, description="Significance level of the Mann-Whitney U test.")
    if_missing: Literal["fail", "pass"] = Field(default="fail",
        description="Verdict when the baseline does not exist for a device yet.")
    allow_different: list[Literal["model", "runtime", "target"]] = Field(default_factory=list,
        description="Differences from the baseline run that still allow a comparison (e.g. [model] to check a "
        "retrained model against the last release's run); any other difference in model hash, runtime or target "
        "makes the gate fail as not comparable.")


# -- LLM gates (a spec whose model is an LLM folder; docs/qualify.md "LLM specs") ---------------------------------
class TtftGate(_Strict):
    """Time to first token at a percentile must be at most ``max_ms`` in every workload cell."""

    percentile: str = Field(default="p99", description="p50, p90, p95, p99 or p999 over the repetitions.")
    max_ms: float = Field(gt=0, description="Largest allowed TTFT at that percentile, ms.")

    _pct = field_validator("percentile")(_percentile)


class TpotGate(_Strict):
    """Time per output token (after the first) at a percentile must be at most ``max_ms`` in every cell."""

    percentile: str = Field(default="p99", description="p50, p90, p95, p99 or p999 over every token latency.")
    max_ms: float = Field(gt=0, description="Largest allowed TPOT at that percentile, ms.")

    _pct = field_validator("percentile")(_percentile)


class DecodeRateGate(_Strict):
    """Decode tokens per second (median over repetitions) must be at least ``min_tokens_per_s`` in every cell."""

    min_tokens_per_s: float = Field(gt=0, description="Smallest allowed decode rate, tokens/s.")


class KvCacheGate(_Strict):
    """The KV cache the largest cell needs (layers x 2 x kv_heads x head_size x context x dtype x batch) must be at
    most ``max_mb`` MiB."""

    max_mb: float = Field(gt=0, description="Largest allowed KV-cache size, MiB.")


class EnergyPerTokenGate(_Strict):
    """Energy per token of a phase must be at most ``max_mj`` in every cell; an ESTIMATE says so in its verdict."""

    max_mj: float = Field(gt=0, description="Largest allowed energy per token, mJ.")
    phase: Literal["decode", "prefill"] = Field(default="decode",
        description="decode: per output token; prefill: per prompt token.")
    require_measured: bool = Field(default=False, description="Fail when the energy is an estimate (no sensor).")


def _unset(value: object) -> bool:
    return value is None


class MetricGate(_Strict):
    """A gate on one declared metric of a plug-in model kind (its KindDescriptor's ``metrics``), held in every cell
    (the worst cell decides). ``stat``: a percentile the metric declares (computed from the raw readings, so the
    run must support it), ``mean``, or ``value`` (a single-valued metric)."""

    stat: str = Field(default="p50", description="p50, p90, p99, ... (of the metric's percentiles), mean or value.")
    max: float | None = Field(default=None, description="Largest allowed value, in the metric's unit.")
    min: float | None = Field(default=None, description="Smallest allowed value, in the metric's unit.")

    @model_validator(mode="after")
    def _one_bound(self) -> MetricGate:
        if (self.max is None) == (self.min is None):
            raise ValueError("give exactly one of 'max' or 'min'")
        return self


class MetricGates(RootModel[dict[str, MetricGate]]):
    """The ``metric`` gate: metric name -> its gate, e.g. ``{rtf: {stat: p99, max: 0.5}}``."""

    model_config = ConfigDict(frozen=True)

    @field_validator("root")
    @classmethod
    def _named(cls, value: dict[str, MetricGate]) -> dict[str, MetricGate]:
        bad = [k for k in value if not re.fullmatch(r"[a-z0-9][a-z0-9_]*", k)]
        if bad or not value:
            raise ValueError(f"metric names are lower-case words, e.g. rtf (got {bad or 'none'})")
        return value


class Gates(_Strict):
    """At most one gate of each kind; a profile's gate is overridden key by key, or removed with ``null``."""

    latency: LatencyGate | None = None
    fps: FpsGate | None = None
    deadline_miss: DeadlineMissGate | None = None
    memory: MemoryGate | None = None
    model_size: ModelSizeGate | None = None
    retention: RetentionGate | None = None
    energy: EnergyGate | None = None
    cold_start: ColdStartGate | None = None
    throughput: ThroughputGate | None = None
    regression: RegressionGate | None = None
    ttft_ms: TtftGate | None = None
    tpot_ms: TpotGate | None = None
    decode_tokens_per_s: DecodeRateGate | None = None
    kv_cache_mb: KvCacheGate | None = None
    energy_per_token: EnergyPerTokenGate | None = None
    metric: MetricGates | None = Field(default=None, exclude_if=_unset,
                                            description="Gates on a plug-in kind's own metrics (docs/qualify.md).")

    def active(self) -> list[str]:
        """Names of the gates that are set, in a fixed order."""
        return [name for name in type(self).model_fields if getattr(self, name) is not None]


GATE_KINDS: tuple[str, ...] = tuple(Gates.model_fields)
# Which gates apply to which kind of model is the kind's declaration (edgeopt/registry/kinds, ``gates``).


# -- what to qualify, where, how ---------------------------------------------------------------------------------
class ModelSpec(_Strict):
    """The model: a file, or a zoo model built into the work dir. With a recipe or ``optimized``, it is the
    reference for retention."""

    path: str | None = Field(default=None, description="ONNX model file (relative paths: to the spec file), a "
                             "deployment (folder with deployment.json, or that file): its model with its settings, "
                             "or an LLM folder (Hugging Face, onnxruntime-genai or OpenVINO GenAI).")
    zoo: str | None = Field(default=None, description="Zoo model name (edgeopt zoo list), built locally.")
    shapes: dict[str, list[int]] = Field(default_factory=dict, description="Concrete shapes of dynamic inputs.")

    @model_validator(mode="after")
    def _one_source(self) -> ModelSpec:
        if (self.path is None) == (self.zoo is None):
            raise ValueError("give exactly one of 'path' or 'zoo'")
        return self


class TargetSpec(_Strict):
    """Where to qualify: the local machine (``target``), an inventory device, an SSH host, or many inventory
    devices at once (``devices``: names, ``tag:TAG``, globs; one device result each, run in parallel)."""

    target: str | None = Field(default=None,
        description="Target name (edgeopt targets); default: the device's, or local.")
    device: str | None = Field(default=None, description="Device name in the inventory (edgeopt devices list).")
    host: str | None = Field(default=None, description="user@addr[:port] of an SSH device not in the inventory.")
    devices: str | None = Field(default=None,
        description="Inventory devices selected by name, tag:TAG or glob (comma-separated), e.g. tag:rpi5; each "
                    "is labelled by its inventory name (docs/fleet.md).")
    name: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.@:-]*$",
                             description="Label in reports (default: device, host or target).")
    key: str | None = Field(default=None, description="SSH private key file.")
    python: str | None = Field(default=None, description="Absolute interpreter path on the device.")
    known_hosts: str | None = Field(default=None, description="Trusted host keys file.")
    accept_new_host_key: bool = Field(default=False, description="Trust and record a host key seen for the first time.")

    @model_validator(mode="after")
    def _one_place(self) -> TargetSpec:
        if self.device and self.host:
            raise ValueError("give 'device' or 'host', not both")
        if self.devices and (self.device or self.host or self.name):
            raise ValueError("'devices' selects many inventory devices, each labelled by its name: drop "
                             "'device', 'host' and 'name' from this entry")
        return self

    def label(self) -> str:
        return self.name or self.device or self.host or self.devices or self.target or "local"


LEGACY_METRICS = ("auto", "accuracy", "top1_agreement")


class EvalSpec(_Strict):
    """Samples for the retention gate (run with onnxruntime on the host) and the metric it is judged by."""

    data: str | None = Field(default=None,
        description=".npz keyed by input name (optional 'labels'), .npy, or an image "
        "folder; none: seeded random inputs (indicative only).")
    samples: int = Field(default=64, ge=1, le=100_000, description="At most this many samples.")
    metric: str = Field(default="auto",
        description="auto: accuracy when the data has labels, else top-1 agreement with the reference (a "
        "classifier-like first output); accuracy; top1_agreement; or any sweep metric (agreement, top1, cosine, "
        "mask_iou, detection, snr_db, max_abs_err, package.module:function) with the parameters below.")
    output: str | None = Field(default=None,
        description="Output the metric reads: INDEX|NAME[,slice=[:,4:,:]] (as sweep --output); default: output 0.")
    axis: int | None = Field(default=None, description="Metric parameter, as sweep --axis.")
    score_threshold: float | None = Field(default=None, description="Metric parameter, as sweep --score-threshold.")
    mask_threshold: float | None = Field(default=None, description="Metric parameter, as sweep --mask-threshold.")
    iou_threshold: float | None = Field(default=None, gt=0, le=1,
                                        description="Metric parameter, as sweep --iou-threshold.")

    @model_validator(mode="after")
    def _metric_known(self) -> EvalSpec:
        spec = self.metric_spec()
        if not isinstance(spec, str):
            from ..errors import InputError
            from ..evaluation import parse_output, resolve_metric

            try:
                resolve_metric(spec)  # unknown names and parameters the metric does not take: a spec error
                parse_output(self.output)
            except InputError as exc:
                raise ValueError(str(exc)) from None
        return self

    def metric_spec(self) -> MetricSpec | str:
        """The retention metric: the classic ``auto``/``accuracy``/``top1_agreement`` name, or a sweep
        :class:`~edgeopt.evaluation.MetricSpec` (an output or a parameter given turns the classic names into
        their sweep metric: accuracy -> top1, top1_agreement -> agreement)."""
        params = {k: getattr(self, k) for k in ("axis", "score_threshold", "mask_threshold", "iou_threshold")}
        if self.metric in LEGACY_METRICS and self.output is None and all(v is None for v in params.values()):
            return self.metric
        name = {"auto": None, "accuracy": "top1", "top1_agreement": "agreement"}.get(self.metric, self.metric)
        return MetricSpec(name=name, **params)


class MeasureSpec(_Strict):
    """Measurement settings of each device's timed run (echoed in the results)."""

    iterations: int | None = Field(default=None, ge=1, le=MAX_ITERATIONS,
        description="Minimum timed inferences (default: 200, or what the gates' percentiles need).")
    min_duration_s: float = Field(default=2.0, ge=0, le=MAX_DURATION_S,
        description="Minimum duration of the timed phase, s.")
    max_duration_s: float = Field(default=600.0, gt=0, le=MAX_DURATION_S,
        description="Watchdog on the timed phase, s.")
    warmup: int = Field(default=10, ge=0, le=MAX_WARMUP, description="Warm-up inferences.")
    warmup_s: float = Field(default=0.0, ge=0, le=MAX_DURATION_S,
        description="Minimum warm-up seconds.")
    threads: int = Field(default=0, ge=0, le=MAX_THREADS, description="Runtime intra-op threads (0: the runtime's "
                                                                      "default).")
    streams: int = Field(default=1, ge=1, le=MAX_STREAMS, description="Concurrent inference streams.")
    batch: int = Field(default=1, ge=1, le=MAX_BATCH, description="Batch size for a dynamic leading dimension.")
    seed: int = Field(default=0, ge=0, le=MAX_SEED, description="Seed of generated inputs and of the random eval "
                                                                "samples.")
    runtime: str | None = Field(default=None, description="Agent runtime (default: the target's first that fits).")
    energy: bool = Field(default=True, description="Measure (or estimate) energy per inference.")
    power_sensor: str = Field(default="auto", description="auto, none, ina3221, rapl, rpi5_pmic or hwmon.")


class LlmSpec(_Strict):
    """The generative workload of an LLM spec (as ``edgeopt bench LLM_FOLDER``'s options; docs/llm-bench.md)."""

    runtime: str | None = Field(default=None,
        description="With a recipe: which runtime folder of the optimize output to qualify (default: the first "
                    "the recipe builds); with an exported folder: must match it. A generative runtime's name.")
    prompt_tokens: list[int] = Field(default_factory=lambda: [128], min_length=1, description="Prompt lengths.")
    gen_tokens: list[int] = Field(default_factory=lambda: [128], min_length=1,
                                  description="New tokens per generation (EOS ignored).")
    context_depth: list[int] = Field(default_factory=lambda: [0], min_length=1,
                                     description="Tokens in the KV cache before the prompt.")
    batch: list[int] = Field(default_factory=lambda: [1], min_length=1, description="Sequences generated together.")
    threads: list[int] = Field(default_factory=lambda: [0], min_length=1, description="CPU threads (0: default).")
    repetitions: int | None = Field(default=None, ge=1,
        description="Timed generations per cell (default: 10, or what the gates' percentiles need).")
    warmup: int = Field(default=1, ge=0, description="Untimed generations per cell.")
    eval: str | None = Field(default=None, description="Held-out text file for the retention gate (LLM retention).")

    @field_validator("runtime")
    @classmethod
    def _generative_runtime(cls, value: str | None) -> str | None:
        from ..registry import GENERATIVE, runtimes_of_kind  # the generative runtimes, plug-ins included
        names = [r.name for r in runtimes_of_kind(GENERATIVE)]
        if value is not None and value not in names:
            raise ValueError(f"Input should be {' or '.join(repr(n) for n in names)}")
        return value

    @field_validator("prompt_tokens", "gen_tokens", "batch")
    @classmethod
    def _positive(cls, values: list[int]) -> list[int]:
        if min(values) < 1:
            raise ValueError(f"values must be >= 1 (got {values})")
        return values


class MlflowSinkSpec(_Strict):
    """Export the result to MLflow (needs the ``[mlflow]`` extra)."""

    tracking_uri: str | None = Field(default=None, description="MLflow tracking URI (default: MLflow's own default).")
    experiment: str = Field(default="edgeopt-qualify", min_length=1, description="Experiment name.")


class SinksSpec(_Strict):
    mlflow: MlflowSinkSpec | None = None


class QualifySpec(_Strict):
    """A qualification spec (one YAML file)."""

    version: Literal[1] = Field(default=1, description="Spec format version.")
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", description="Qualification name (reports, history).")
    description: str = Field(default="", description="What is being qualified and why.")
    extends: list[str] = Field(default_factory=list, description="Gate profiles applied first, in order.")
    model: ModelSpec
    recipe: str | None = Field(default=None,
        description="Optimize the model with this recipe first (name or YAML path).")
    calib: str | None = Field(default=None, description="Calibration data for the recipe (.npz, .npy, image folder).")
    optimized: str | None = Field(default=None,
        description="An already optimized model file to qualify instead of `model`, or a deployment (a folder "
                    "with deployment.json, or that file): its model runs with exactly its settings.")
    inventory: str | None = Field(default=None,
        description="Devices file for `device:` entries (default: EDGEOPT_INVENTORY or ./devices.yaml).")
    targets: list[TargetSpec] = Field(default_factory=lambda: [TargetSpec(target="local")], min_length=1,
                                      description="Devices to qualify on (default: the local machine).")
    eval: EvalSpec = Field(default_factory=EvalSpec)
    measure: MeasureSpec = Field(default_factory=MeasureSpec)
    gates: Gates = Field(default_factory=Gates)
    llm: LlmSpec | None = Field(default=None, description="Generative workload when the model is an LLM folder "
                                "(default workload when omitted).")
    workload: dict[str, Any] | None = Field(default=None, exclude_if=_unset, description="Workload settings of a "
                                            "plug-in kind's model, checked against the kind's workload model.")
    allow_target_mismatch: bool = Field(
        default=False, description="Let a device whose hardware is not its target's (an x86 host measured as "
        "rpi5: a dry run) pass; otherwise such a device fails the `target` check.")
    allow_deployment_mismatch: bool = Field(
        default=False, description="Let a deployment run on a device whose runtime version or kernel-relevant CPU "
        "flags differ from the measuring machine's pass its `deployment_match` gate (docs/qualify.md).")
    override_deployment: bool = Field(
        default=False, description="Let measure.runtime/threads/streams/batch and model.shapes win over a "
        "deployment's settings; without it they must agree with the deployment.")
    costs: CostSettings = Field(default_factory=CostSettings)
    sinks: SinksSpec = Field(default_factory=SinksSpec)

    @field_validator("extends", mode="before")
    @classmethod
    def _listify(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value
