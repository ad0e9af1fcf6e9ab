"""Typed, frozen settings that travel below the public entry points: what to measure and where it runs.

The public functions (:func:`edgeopt.benchmark`, :func:`edgeopt.sweep`, ``benchmark_manifest``, the CLI) keep
their flat keyword options and turn them into these objects at the edge; everything below takes the objects.

- :class:`MeasureSettings`: warm-up, iterations, durations, threads, streams, batch, seed, shapes, inputs,
  runtime and its options, frame pacing, the FPS budget and energy (:class:`EnergySettings`).
- :class:`RemoteSpec`: where the agent runs: ``--host`` or ``--device`` (an inventory name) with the key,
  interpreter, inventory, known_hosts, host-key policy and SSH deadlines (:class:`SshTimeouts`).

Every numeric setting has documented bounds (the ``MAX_*`` constants below; docs/bench.md, "Bounds"): finite, at
least what a run needs, at most what one can sensibly ask for. A value outside them, from a flag, a spec or a
Python caller, is an :class:`InputError` (exit 2) naming the key, before anything runs: ``max_duration_s: .inf``
was an internal OverflowError reported as a device error (exit 3), and ``iterations: 1e30`` was accepted. The
agent keeps its own checks for a request that did not come through here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from edgeopt_agent.protocol import ENERGY_DEFAULTS

from .errors import InputError

_M = TypeVar("_M", bound=BaseModel)

# Bounds of the numeric settings (docs/bench.md, "Bounds"). Floats must also be finite (no inf, no NaN).
MAX_ITERATIONS = 10_000_000  # timed inferences per stream: 10 M samples is ~80 MB of them at the agent
MAX_WARMUP = 1_000_000  # untimed warm-up inferences
MAX_DURATION_S = 86_400.0  # any duration (warm-up, minimum, watchdog, idle baseline): one day
MAX_THREADS = 1024  # intra-op threads
MAX_STREAMS = 1024  # concurrent inference streams (one thread each)
MAX_BATCH = 65_536  # batch of a dynamic leading dimension
MAX_SEED = 2**63 - 1  # the history stores the seed as an SQLite INTEGER (int64)
MAX_FPS = 10_000_000.0  # a frame rate, frames/s (pacing, budget): 0.1 us a frame; above is a typo
MAX_RATE_HZ = 10_000.0  # power readings per second


def refuse_shadowed(fn: Callable[..., Any], given: Mapping[str, Any], typed: object | None, names: Sequence[str],
                    word: str) -> None:
    """A public function's keywords that its typed ``word=`` object replaces: any of ``names`` set to other than its
    default beside that object would be silently dropped, so it is refused.

    Raises:
        InputError: e.g. ``threads=4`` with ``settings=`` (exit code 2).
    """
    if typed is None:
        return
    defaults = fn.__kwdefaults__ or {}  # the public functions' options are keyword-only
    clash = [n for n in names if given[n] != defaults[n]]
    if clash:
        raise InputError(f"{fn.__name__}: {', '.join(clash)} given with {word}=: set them on the {word} object (it "
                         "replaces those keywords)")


def build(model: type[_M], values: Mapping[str, Any]) -> _M:
    """``model`` validated from ``values``; a bad value is an :class:`InputError` naming the field and value.

    Raises:
        InputError: a value of the wrong type (exit code 2).
        TypeError: an option name ``model`` does not have (a programming error, like a wrong keyword).
    """
    unknown = sorted(set(values) - set(model.model_fields))
    if unknown:
        raise TypeError(f"{model.__name__}: unexpected option(s) {', '.join(unknown)}; known: "
                        f"{', '.join(model.model_fields)}")
    try:
        return model.model_validate(dict(values))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise InputError(f"{where} {err.get('input')!r}: {err['msg']}; pass a valid value") from None


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)  # every float finite

    def replace(self: _M, **changes: Any) -> _M:
        """A copy with ``changes`` applied and validated again."""
        return build(type(self), {**dict(self), **changes})


class SshTimeouts(_Frozen):
    """Deadlines of each remote step, in seconds."""

    connect_s: float = Field(default=15.0, gt=0, description="TCP connect, handshake, auth, channel open.")
    upload_s: float = Field(default=600.0, gt=0, description="Pushing the agent and the model (one run).")
    fetch_s: float = Field(default=60.0, gt=0, description="Job setup and fetching the result file.")
    cleanup_s: float = Field(default=15.0, gt=0, description="Removing the job directory.")
    run_grace_s: float = Field(default=120.0, gt=0, description="On top of max_duration_s: start, load, warm-up.")
    probe_s: float = Field(default=120.0, gt=0, description="`edgeopt_agent probe` (imports every runtime).")
    keepalive_s: float = Field(default=5.0, gt=0, description="Interval of SSH keepalives and liveness checks.")
    dead_after_s: float = Field(default=30.0, gt=0, description="A link without keepalive replies this long is dead.")
    lock_wait_s: float = Field(default=300.0, ge=0, description="How long a job waits for a busy device lock.")


class RemoteSpec(_Frozen):
    """Where the agent runs: nothing set is this machine; ``host`` or ``device`` is an SSH device.

    Nothing connects when this is built; :func:`edgeopt.runners.select.choose_runner` turns it into a runner.
    """

    host: str | None = Field(default=None, description="`user@addr[:port]` of an SSH device not in the inventory.")
    device: str | None = Field(default=None, description="Name of a device in the inventory.")
    key: Path | None = Field(default=None, description="Private key file (overrides the inventory's).")
    python: str | None = Field(default=None,
        description="Interpreter of the agent: absolute path on the device (remote default /usr/bin/python3); "
                    "locally, the agent's Python (default: this one).")
    inventory: Path | None = Field(default=None,
        description="The devices file (default: EDGEOPT_INVENTORY or ./devices.yaml).")
    known_hosts: Path | None = Field(default=None, description="Trusted host keys (default ~/.ssh/known_hosts).")
    accept_new_host_key: bool = Field(default=False,
        description="Trust and record a host key seen for the first time (verify its fingerprint).")
    timeouts: SshTimeouts | None = Field(default=None, description="SSH step deadlines (default: SshTimeouts()).")
    device_cache_mb: float = Field(default=2048.0, gt=0,
        description="Size limit of the device's cache, MB; least recently used entries beyond it are evicted.")

    @property
    def remote(self) -> bool:
        """True when a host or an inventory device is named."""
        return bool(self.host or self.device)


class EnergySettings(_Frozen):
    """Energy per inference: measured by a power reader on the device, else estimated from the target's TDP."""

    enabled: bool = Field(default=True, description="Measure or estimate energy; False: the result's energy is null.")
    sensor: str = Field(default=str(ENERGY_DEFAULTS["sensor"]),
        description="auto (the target's reader, then any), none (estimate only), ina3221, rapl, rpi5_pmic, hwmon.")
    sysfs_root: str = Field(default=str(ENERGY_DEFAULTS["sysfs_root"]),
        description="Where the agent reads /sys on the device (tests and emulated sensor trees).")
    rate_hz: float = Field(default=float(ENERGY_DEFAULTS["rate_hz"]), gt=0, le=MAX_RATE_HZ,
        description="Power readings per second during the timed phase, Hz.")
    idle_s: float = Field(default=float(ENERGY_DEFAULTS["idle_s"]), ge=0, le=MAX_DURATION_S,
        description="Idle baseline window before warm-up, s (0: none).")
    vcgencmd: str = Field(default=str(ENERGY_DEFAULTS["vcgencmd"]),
        description="Path of vcgencmd on a Raspberry Pi 5 (rpi5_pmic).")

    @field_validator("sysfs_root", mode="before")
    @classmethod
    def _path_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, Path) else value


# edgeopt.benchmark's flat energy keywords -> EnergySettings fields.
ENERGY_KEYWORDS: dict[str, str] = {"energy": "enabled", "power_sensor": "sensor", "sysfs_root": "sysfs_root",
                                   "power_rate_hz": "rate_hz", "power_idle_s": "idle_s", "vcgencmd": "vcgencmd"}


class MeasureSettings(_Frozen):
    """How one model is measured and judged: echoed back in the result's ``settings``.

    The defaults are :func:`edgeopt.benchmark`'s.
    """

    warmup: int = Field(default=10, ge=0, le=MAX_WARMUP, description="Minimum untimed warm-up inferences.")
    warmup_s: float = Field(default=0.0, ge=0, le=MAX_DURATION_S,
        description="Minimum warm-up duration, s (both minima are met).")
    iterations: int = Field(default=200, ge=1, le=MAX_ITERATIONS,
        description="Minimum timed inferences per stream (frames when paced).")
    min_duration_s: float = Field(default=2.0, ge=0, le=MAX_DURATION_S,
        description="Minimum duration of the timed phase, s.")
    max_duration_s: float = Field(default=600.0, gt=0, le=MAX_DURATION_S,
        description="Watchdog on the timed phase, s; a truncated run is marked invalid.")
    threads: int = Field(default=0, ge=0, le=MAX_THREADS,
        description="Runtime intra-op threads (0: the runtime's default).")
    streams: int = Field(default=1, ge=1, le=MAX_STREAMS, description="Concurrent inference streams (throughput mode).")
    batch: int = Field(default=1, ge=1, le=MAX_BATCH, description="Batch size for a dynamic leading dimension.")
    seed: int = Field(default=0, ge=0, le=MAX_SEED, description="Seed of the generated input data.")
    shapes: dict[str, list[int]] = Field(default_factory=dict,
        description="Concrete shapes of inputs with dynamic dims, by input name.")
    inputs: Path | None = Field(default=None,
        description=".npz of input arrays keyed by input name (instead of generated data).")
    runtime: str | None = Field(default=None,
        description="Agent runtime (onnxruntime, openvino, tflite, tensorrt, coreml, null); None: the target's "
                    "first runtime that loads the model's format.")
    runtime_options: dict[str, Any] = Field(default_factory=dict,
        description="Runtime-specific options, e.g. {'providers': ['CPUExecutionProvider']}.")
    pacing_fps: float | None = Field(default=None, gt=0, le=MAX_FPS,
        description="Issue frames at this rate, frames/s, instead of back to back; None: back to back.")
    fps: float | None = Field(default=None, gt=0, le=MAX_FPS,
        description="Real-time budget, frames/s; None: the target's default_fps when use_target_fps.")
    use_target_fps: bool = Field(default=True,
        description="Fall back to the target's default FPS budget when fps is None.")
    percentile: str = Field(default="p99", description="Latency percentile checked against the budget (p50..p999).")
    keep_samples: bool = Field(default=False, description="Include every per-inference latency in the result.")
    energy: EnergySettings = Field(default_factory=EnergySettings, description="Energy per inference.")

    @field_validator("shapes", mode="before")
    @classmethod
    def _shapes(cls, value: Any) -> Any:
        if value is None:
            return {}
        if isinstance(value, Mapping):
            try:
                return {str(k): [int(d) for d in v] for k, v in value.items()}
            except (TypeError, ValueError):
                return value  # pydantic names the bad entry
        return value

    @field_validator("runtime_options", mode="before")
    @classmethod
    def _options(cls, value: Any) -> Any:
        if value is None:
            return {}
        return dict(value) if isinstance(value, Mapping) else value

    @classmethod
    def from_kwargs(cls, **options: Any) -> MeasureSettings:
        """Settings from :func:`edgeopt.benchmark`'s keyword names (energy ones flat: ``energy``, ``power_sensor``,
        ``sysfs_root``, ``power_rate_hz``, ``power_idle_s``, ``vcgencmd``).

        Raises:
            InputError: a value of the wrong type. TypeError: an unknown option name.
        """
        energy = {field: options.pop(kw) for kw, field in ENERGY_KEYWORDS.items() if kw in options}
        return build(cls, {**options, "energy": build(EnergySettings, energy)})


# Public option names of edgeopt.benchmark that are settings (the rest: model, target, runner, progress, ...).
MEASURE_KEYWORDS: frozenset[str] = frozenset(set(MeasureSettings.model_fields) - {"energy"} | set(ENERGY_KEYWORDS))
REMOTE_KEYWORDS: frozenset[str] = frozenset(RemoteSpec.model_fields)


def split_options(options: Mapping[str, Any]) -> tuple[MeasureSettings, RemoteSpec]:
    """:func:`edgeopt.benchmark`'s keyword options as typed settings.

    Raises:
        InputError: a value of the wrong type. TypeError: an option that is neither a setting nor a remote option.
    """
    unknown = sorted(set(options) - MEASURE_KEYWORDS - REMOTE_KEYWORDS)
    if unknown:
        raise TypeError(f"unexpected option(s) {', '.join(unknown)}; known: "
                        f"{', '.join(sorted(MEASURE_KEYWORDS | REMOTE_KEYWORDS))}")
    measure = MeasureSettings.from_kwargs(**{k: v for k, v in options.items() if k in MEASURE_KEYWORDS})
    return measure, build(RemoteSpec, {k: v for k, v in options.items() if k in REMOTE_KEYWORDS})

