"""Request and result types shared by the host and the agent (defined once, here).

Plain dataclasses and JSON so the module runs on Python 3.8 with the standard library alone. The host
imports this module; the agent reads a :class:`Request` and writes a :class:`RawRun`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

PROTOCOL_VERSION = 1

# The most latency samples one timed phase keeps, all streams together: it ends once it has them, even before
# ``iterations`` and ``min_duration_s`` are reached (only inferences faster than ~5 us, or requests of more
# iterations, get there). A result's size is then bounded whatever the request (edgeopt.runners.limits).
MAX_SAMPLES = 2_000_000
# The most frames a paced run keeps: each keeps two numbers (its latency and its response time), so a paced result
# holds no more numbers than a back-to-back one.
MAX_FRAMES = MAX_SAMPLES // 2

STATUS_OK = "ok"
STATUS_ERROR = "error"

# Error kinds the agent reports; the host maps "input" to a usage error and the rest to a device error.
ERROR_INPUT = "input"
ERROR_RUNTIME_MISSING = "runtime_missing"
ERROR_RUNTIME = "runtime"
ERROR_TIMEOUT = "timeout"
ERROR_INTERNAL = "internal"

# Energy measurement settings of a Request (``Request.energy``); keys the agent accepts, with their defaults.
# enabled: measure (or estimate) energy at all; sensor: auto|none|ina3221|rapl|rpi5_pmic|hwmon; prefer: sensor
# ``auto`` tries first (the target's); sysfs_root: where /sys is (tests point it at emulated trees);
# rate_hz: power samples per second; idle_s: idle baseline window before warm-up; vcgencmd: Pi 5 command path.
ENERGY_DEFAULTS: Dict[str, Any] = {
    "enabled": True,
    "sensor": "auto",
    "prefer": "",
    "sysfs_root": "/",
    "rate_hz": 20.0,
    "idle_s": 0.5,
    "vcgencmd": "vcgencmd",
}


# Generative workload of a Request (``Request.generate``, the ``generate`` command, edgeopt_agent.generate); keys the
# agent accepts, with their defaults. List-valued axes like llama-bench's (their cross product are the cells):
# prompt_tokens, gen_tokens, context_depth (tokens already in the KV cache before the prompt), batch, threads
# (0: the runtime's default). repetitions: timed generations per cell, interleaved across cells; warmup:
# untimed generations per loaded model (threads value) before the first timed one; seed: seeds the prompt token ids;
# trace_hz: clock/temperature readings per second during the timed repetitions (0: only at start and end);
# kv_probe: after the timed repetitions, one untimed generation per cell read for memory in use (glibc's
# malloc_trim first) and the runtime's KV probe per load (measured KV bytes per token).
GENERATE_DEFAULTS: Dict[str, Any] = {
    "prompt_tokens": [128],
    "gen_tokens": [128],
    "context_depth": [0],
    "batch": [1],
    "threads": [0],
    "repetitions": 5,
    "warmup": 1,
    "seed": 0,
    "trace_hz": 2.0,
    "kv_probe": True,
}


class ProtocolError(ValueError):
    """A request or result that does not match this protocol version."""


@dataclass(frozen=True)
class Request:
    """What the host asks the agent to measure. Every setting is echoed back in the result.

    Attributes:
        model_path: path of the model file as seen by the agent.
        runtime: registered runtime name (``onnxruntime``, ``null``).
        runtime_options: runtime-specific options (e.g. ``providers`` for onnxruntime).
        warmup: minimum number of untimed warm-up inferences after the first one (a model a served agent kept
            loaded from an earlier request warmed up then: at most ``loaded.REUSED_WARMUP`` of them).
        warmup_s: minimum warm-up duration in seconds (both minima are met); not for such a kept model.
        iterations: minimum number of timed inferences per stream.
        min_duration_s: minimum duration of the timed phase in seconds (both minima are met).
        max_duration_s: watchdog: the agent stops timing after this many seconds and says so.
        batch: batch size used for dynamic leading dimensions.
        threads: intra-op threads for the runtime (0: the runtime's default).
        streams: concurrent inference streams (threads each running their own loop).
        seed: seed of the generated input data.
        shapes: concrete shapes for inputs with dynamic dimensions, by input name.
        inputs_npz: optional ``.npz`` with input arrays keyed by input name (overrides generated data).
        progress_interval_s: how often the agent emits a progress line on stderr (0: never).
        energy: power measurement settings, keys and defaults in ``ENERGY_DEFAULTS`` (missing keys default).
    """

    model_path: str
    runtime: str = "onnxruntime"
    runtime_options: Dict[str, Any] = field(default_factory=dict)
    warmup: int = 10
    warmup_s: float = 0.0
    iterations: int = 200
    min_duration_s: float = 2.0
    max_duration_s: float = 600.0
    batch: int = 1
    threads: int = 0
    streams: int = 1
    seed: int = 0
    shapes: Dict[str, List[int]] = field(default_factory=dict)
    inputs_npz: Optional[str] = None
    progress_interval_s: float = 1.0
    energy: Dict[str, Any] = field(default_factory=lambda: dict(ENERGY_DEFAULTS))
    # Frame-paced load (edgeopt_agent.paced): frame i is issued at t0 + i / pacing_fps; None: run back to back.
    pacing_fps: Optional[float] = None
    # Accuracy on the device (``python -m edgeopt_agent evaluate``, edgeopt_agent.evaluate): inputs .npz, outputs .npz.
    eval_npz: Optional[str] = None
    eval_output: Optional[str] = None
    # Generative models (``python -m edgeopt_agent generate``): the workload, keys and defaults in
    # ``GENERATE_DEFAULTS`` (missing keys default); ``{}`` for the other commands.
    generate: Dict[str, Any] = field(default_factory=dict)
    protocol_version: int = PROTOCOL_VERSION

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Request":
        return _strict_build(cls, data)


@dataclass(frozen=True)
class TensorInfo:
    """Name, shape (ints, or strings for symbolic dims, or None for unknown) and numpy dtype name."""

    name: str
    shape: List[Any]
    dtype: str


@dataclass(frozen=True)
class RawRun:
    """Raw measurements of one agent run: no statistics, those are the host's job.

    Attributes:
        status: ``ok`` or ``error``; a device fault comes back as data, never as a crash.
        error: one-line message when ``status == "error"``.
        error_kind: one of the ``ERROR_*`` constants.
        request: the request as the agent understood it.
        runtime: ``{"name", "version", ...}`` plus runtime details (e.g. the providers really used).
        samples_ns: per-inference latencies in nanoseconds, in completion order (all streams).
        timed_wall_s: wall time of the timed phase.
        timed_inferences: inferences completed in the timed phase (all streams).
        warmup_done: warm-up inferences run and their duration.
        load_ms: model load time (session creation).
        first_inference_ms: the first inference after loading.
        memory_kb: ``{"baseline": VmHWM before loading, "peak": VmHWM at the end}`` in KiB (None if unreadable).
        inputs: the inputs fed, with concrete shapes.
        outputs: the outputs produced.
        truncated: True when the watchdog (``max_duration_s``) ended the timed phase early.
        environment: machine and library facts where the agent ran.
        power: what the power sampler measured (``{}`` when energy is disabled; ``{"sensor": None, "reason"}``
            when no sensor was read): sensor, rails, kind, idle and active windows (avg W, energy J,
            samples, duration), see ``edgeopt_agent.power.sampler``.
    """

    status: str
    error: Optional[str] = None
    error_kind: Optional[str] = None
    request: Optional[Dict[str, Any]] = None
    runtime: Dict[str, Any] = field(default_factory=dict)
    samples_ns: List[int] = field(default_factory=list)
    timed_wall_s: float = 0.0
    timed_inferences: int = 0
    warmup_done: Dict[str, Any] = field(default_factory=dict)
    load_ms: Optional[float] = None
    first_inference_ms: Optional[float] = None
    memory_kb: Dict[str, Optional[int]] = field(default_factory=dict)
    inputs: List[Dict[str, Any]] = field(default_factory=list)
    outputs: List[Dict[str, Any]] = field(default_factory=list)
    truncated: bool = False
    environment: Dict[str, Any] = field(default_factory=dict)
    power: Dict[str, Any] = field(default_factory=dict)
    # Frame-paced runs only (``{}`` otherwise): see ``edgeopt_agent.paced.paced_loop`` for the keys.
    frames: Dict[str, Any] = field(default_factory=dict)
    # ``profile`` command only (``{}`` otherwise): per-layer records; see ``edgeopt_agent.profile`` for the keys.
    profile: Dict[str, Any] = field(default_factory=dict)
    # ``generate`` command only (``{}`` otherwise): raw per-cell timings and memory of a generative model; see
    # ``edgeopt_agent.generate`` for the keys (statistics are the host's job, edgeopt.bench.llm).
    generate: Dict[str, Any] = field(default_factory=dict)
    agent_version: str = ""
    protocol_version: int = PROTOCOL_VERSION

    @property
    def ok(self) -> bool:
        return self.status == STATUS_OK

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "RawRun":
        return _strict_build(cls, data)


def _strict_build(cls: Any, data: Any) -> Any:
    """Build a dataclass from a dict, refusing unknown keys and other protocol versions."""
    if not isinstance(data, dict):
        raise ProtocolError("expected a JSON object for %s, got %s" % (cls.__name__, type(data).__name__))
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ProtocolError("unknown %s field(s): %s" % (cls.__name__, ", ".join(unknown)))
    version = data.get("protocol_version", PROTOCOL_VERSION)
    if version != PROTOCOL_VERSION:
        raise ProtocolError(
            "protocol version %s is not supported by this side (speaks %d): update edgeopt and the agent together"
            % (version, PROTOCOL_VERSION)
        )
    try:
        return cls(**data)
    except TypeError as exc:
        raise ProtocolError("bad %s: %s" % (cls.__name__, exc)) from None
