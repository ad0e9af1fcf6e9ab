"""The typed qualification spec: what to qualify, where, on which data, and the gates it must pass.

Every model is frozen and strict (unknown keys are errors, with file:line from :mod:`edgeopt.qualify.loader`).
Reference with examples: ``docs/qualify.md``. Sizes and memory are in MiB (2**20 bytes), like ``memory_mb`` in
bench results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from ..evaluation.spec import MetricSpec
from ..registry import GENERATIVE, builtin_kind
from ..settings import (
    MAX_BATCH,
    MAX_DURATION_S,
    MAX_ITERATIONS,
    MAX_SEED,
    MAX_STREAMS,
    MAX_THREADS,
    MAX_WARMUP,
)
from .costs import CostSettings
from .gate_spec import Gates, StrictModel, is_unset
from .workload_spec import workload_block

SPEC_VERSION = 1

# -- what to qualify, where, how ---------------------------------------------------------------------------------
class ModelSpec(StrictModel):
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


class TargetSpec(StrictModel):
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


class EvalSpec(StrictModel):
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


class MeasureSpec(StrictModel):
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


class LlmOwnSpec(StrictModel):
    """The generative workload of an LLM spec (as ``edgeopt bench LLM_FOLDER``'s options; docs/llm-bench.md): the
    keys qualify declares itself here, and one per flagged field of the generative kind's workload model
    (:class:`LlmSpec`, :mod:`.workload_spec`)."""

    runtime: str | None = Field(default=None,
        description="With a recipe: which runtime folder of the optimize output to qualify (default: the first "
                    "the recipe builds); with an exported folder: must match it. A generative runtime's name.")
    batch: list[int] = Field(default_factory=lambda: [1], min_length=1, description="Sequences generated together.")
    threads: list[int] = Field(default_factory=lambda: [0], min_length=1, description="CPU threads (0: default).")
    eval: str | None = Field(default=None, description="Held-out text file for the retention gate (LLM retention).")

    @field_validator("runtime")
    @classmethod
    def _generative_runtime(cls, value: str | None) -> str | None:
        from ..registry import GENERATIVE, runtimes_of_kind  # the generative runtimes, plug-ins included
        names = [r.name for r in runtimes_of_kind(GENERATIVE)]
        if value is not None and value not in names:
            raise ValueError(f"Input should be {' or '.join(repr(n) for n in names)}")
        return value

    @field_validator("batch")
    @classmethod
    def _positive(cls, values: list[int]) -> list[int]:
        if min(values) < 1:
            raise ValueError(f"values must be >= 1 (got {values})")
        return values


def _generative_workload() -> type[BaseModel]:
    model = builtin_kind(GENERATIVE).load_workload()
    assert model is not None  # the generative kind declares its workload model
    return model


if TYPE_CHECKING:
    class LlmSpec(LlmOwnSpec):
        """The derived keys (prompt_tokens, gen_tokens, ...) are read by name."""

        def __getattr__(self, name: str) -> Any: ...
else:
    # The workload keys (prompt_tokens, gen_tokens, context_depth, repetitions, warmup, kv_probe, ...) are the
    # generative kind's workload model's flagged fields: bench's --prompt-tokens ... and this block read one model.
    LlmSpec = workload_block(_generative_workload(), LlmOwnSpec, name="LlmSpec", chosen={
        "repetitions": "default: 10, or what the gates' percentiles need"})


class MlflowSinkSpec(StrictModel):
    """Export the result to MLflow (needs the ``[mlflow]`` extra)."""

    tracking_uri: str | None = Field(default=None, description="MLflow tracking URI (default: MLflow's own default).")
    experiment: str = Field(default="edgeopt-qualify", min_length=1, description="Experiment name.")


class SinksSpec(StrictModel):
    mlflow: MlflowSinkSpec | None = None


class QualifySpec(StrictModel):
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
    workload: dict[str, Any] | None = Field(default=None, exclude_if=is_unset, description="Workload settings of a "
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
