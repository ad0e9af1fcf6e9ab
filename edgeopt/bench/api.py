"""``edgeopt.benchmark``: measure a model on a target through the device agent.

Flow: typed settings (:class:`~edgeopt.settings.MeasureSettings`, :class:`~edgeopt.settings.RemoteSpec`) ->
runner (local subprocess or SSH) -> inspect the model (bad input fails here, before any device work) -> the
agent request -> raw run -> metrics (statistics, validity, FPS budget, roofline share).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from edgeopt_agent.protocol import RawRun, Request

from .._version import __version__
from ..analysis.report import InspectResult
from ..deploy.use import deployed_settings, mark_result, open_deployment
from ..dispatch import entry, kind_of
from ..enums import Precision
from ..errors import InputError
from ..metrics.compute import MetricInputs, build_result
from ..metrics.energy import energy_request
from ..metrics.latency import percentile_key
from ..metrics.result import BenchResult, ModelInfo
from ..registry import KindDescriptor, find_runtime
from ..registry.lookup import ModelFormat, choose_runtime, detect_format, model_digest
from ..runners import ProgressSink, Runner, raise_for_error
from ..runners.select import use_runner
from ..settings import MeasureSettings, RemoteSpec, build, refuse_shadowed
from ..targets import Target, load_registry
from .inspected import inspect_once
from .request import BenchRequest
from .runtime_pick import first_present

if TYPE_CHECKING:
    from ..metrics.kind_result import KindBenchResult
    from .llm.result import LlmBenchResult


def benchmark(
    model: str | Path, *, target: str | None = None, fps: float | None = None, use_target_fps: bool = True,
    percentile: str = "p99", iterations: int = 200, min_duration_s: float = 2.0, max_duration_s: float = 600.0,
    warmup: int = 10, warmup_s: float = 0.0, threads: int = 0, streams: int = 1, batch: int = 1, seed: int = 0,
    shapes: Mapping[str, Sequence[int]] | None = None, inputs: str | Path | None = None, runtime: str | None = None,
    runtime_options: Mapping[str, Any] | None = None, targets_dirs: Sequence[Path] = (), runner: Runner | None = None,
    progress: ProgressSink | None = None, keep_samples: bool = False, energy: bool = True,
    power_sensor: str = "auto", sysfs_root: str | Path = "/", power_rate_hz: float = 20.0, power_idle_s: float = 0.5,
    vcgencmd: str = "vcgencmd", host: str | None = None, device: str | None = None, key: str | Path | None = None,
    python: str | None = None, inventory: str | Path | None = None, known_hosts: str | Path | None = None,
    accept_new_host_key: bool = False, pacing_fps: float | None = None, device_cache_mb: float = 2048.0,
    override_deployment: bool = False, workload: BaseModel | Mapping[str, Any] | None = None,
    settings: MeasureSettings | None = None, remote: RemoteSpec | None = None,
) -> BenchResult | LlmBenchResult | KindBenchResult:
    """Benchmark ``model`` on ``target`` and check it against an FPS budget; any model kind: the keywords are
    gathered into typed settings and handed to the entry of the model's kind (``KindDescriptor.bench_api``).

    The keyword options are gathered into typed settings here and passed to :func:`run_benchmark`; each is
    documented (with its unit) on the field of the same name of :class:`~edgeopt.settings.MeasureSettings` or
    :class:`~edgeopt.settings.RemoteSpec`.

    Args:
        model: path of a model file (ONNX, OpenVINO IR, TFLite, ...), or a deployment (a folder with
            ``deployment.json``, or that file): its files run with exactly its settings (docs/bench.md); or an LLM
            folder (onnxruntime-genai, OpenVINO GenAI, a ``.gguf``): a generative bench over ``workload``'s cells
            (docs/llm-bench.md); or a model of a plug-in kind (its cells, its ``workload``).
        target: target name (``edgeopt targets`` lists them); None: the ``device``'s target, else ``local``.
        fps, use_target_fps, percentile: the real-time budget and the latency percentile checked against it.
        iterations, min_duration_s, max_duration_s, warmup, warmup_s: how long to warm up and to time.
        threads, streams, batch, seed, shapes, inputs: how the model is fed and run.
        runtime, runtime_options: agent runtime (None: the target's first that loads the model's format; ``null``
            measures the harness itself) and its options, e.g. ``{"providers": ["CPUExecutionProvider"]}``.
        targets_dirs: extra directories of target YAML files.
        runner: where the agent runs (default: built from the remote options, else the local runner).
        progress: callback receiving the agent's progress events.
        keep_samples: include every per-inference latency in the result.
        energy, power_sensor, sysfs_root, power_rate_hz, power_idle_s, vcgencmd: energy per inference (an
            estimate from the target's TDP when no sensor is found); see :class:`~edgeopt.settings.EnergySettings`.
        host, device, key, python, inventory, known_hosts, accept_new_host_key, device_cache_mb: run on an SSH device
            (docs/devices.md).
        pacing_fps: issue frames at this rate instead of back to back (``iterations`` is then the minimum
            number of frames); ``result.deadline`` counts frames that missed their 1/fps deadline.
        override_deployment: with a deployment, let the runtime, runtime options, threads, streams, batch or
            shapes given here (those that differ from the defaults) win over its settings; without it they must
            agree with the deployment.
        workload: an LLM folder's workload (:class:`~edgeopt.bench.llm.workload.LlmWorkload`, or a mapping of its
            fields; default: one cell of 128 prompt and 128 generated tokens at ``threads`` and ``batch``, within
            ``max_duration_s``, prompts seeded by ``seed``; the one-pass settings ``iterations``, ``percentile``,
            ``fps`` ... do not apply to it), or a plug-in kind's workload settings. Refused for a one-pass model.
        settings, remote: the typed settings the CLI builds (:class:`~edgeopt.settings.MeasureSettings`,
            :class:`~edgeopt.settings.RemoteSpec`): when given they replace what the keywords above would build.

    Returns:
        The typed result of the model's kind: :class:`~edgeopt.metrics.result.BenchResult` (``result.passed``
        says whether the run is valid and met its budget), ``LlmBenchResult`` or ``KindBenchResult``
        (``result.valid``).

    Raises:
        InputError: bad model, shapes, inputs or settings; a deployment with a changed file, or a setting that
            contradicts it (exit code 2).
        RunnerError: the agent or device failed (exit code 3).
    """
    for typed, names, word in ((settings, _MEASURE_KEYWORDS, "settings"), (remote, _REMOTE_KEYWORDS, "remote")):
        refuse_shadowed(benchmark, locals(), typed, names, word)  # a keyword the typed object would drop
    settings = settings or MeasureSettings.from_kwargs(
        fps=fps, use_target_fps=use_target_fps, percentile=percentile, iterations=iterations,
        min_duration_s=min_duration_s, max_duration_s=max_duration_s, warmup=warmup, warmup_s=warmup_s,
        threads=threads, streams=streams, batch=batch, seed=seed, shapes=shapes, inputs=inputs, runtime=runtime,
        runtime_options=runtime_options, keep_samples=keep_samples, pacing_fps=pacing_fps, energy=energy,
        power_sensor=power_sensor, sysfs_root=sysfs_root, power_rate_hz=power_rate_hz, power_idle_s=power_idle_s,
        vcgencmd=vcgencmd)
    remote = remote or build(RemoteSpec, {"host": host, "device": device, "key": key, "python": python,
                                          "inventory": inventory, "known_hosts": known_hosts,
                                          "accept_new_host_key": accept_new_host_key,
                                          "device_cache_mb": device_cache_mb})
    request = BenchRequest(settings=settings, remote=remote, target=target, runner=runner, progress=progress,
                           targets_dirs=targets_dirs, override_deployment=override_deployment, workload=workload)
    kind = kind_of(model)  # the registry's answer (a deployment: what it deploys); its bench_api entry runs it
    result: BenchResult | LlmBenchResult | KindBenchResult = entry(kind, "bench_api")(Path(model), kind, request)
    return result


_MEASURE_KEYWORDS = ("fps", "use_target_fps", "percentile", "iterations", "min_duration_s", "max_duration_s", "warmup",
                     "warmup_s", "threads", "streams", "batch", "seed", "shapes", "inputs", "runtime",
                     "runtime_options", "keep_samples", "pacing_fps", "energy", "power_sensor", "sysfs_root",
                     "power_rate_hz", "power_idle_s", "vcgencmd")
_REMOTE_KEYWORDS = ("host", "device", "key", "python", "inventory", "known_hosts", "accept_new_host_key",
                    "device_cache_mb")


def benchmark_tensor(model: Path, kind: KindDescriptor, r: BenchRequest) -> BenchResult:
    """The tensor kind's ``bench_api`` entry: :func:`run_benchmark` with the request's settings."""
    r.refuse_workload(model, kind.model_word)
    return run_benchmark(model, r.settings, target=r.target, runner=r.runner, remote=r.remote, progress=r.progress,
                         targets_dirs=r.targets_dirs, override_deployment=r.override_deployment)


def run_benchmark(
    model: str | Path,
    settings: MeasureSettings,
    *,
    target: str | None = None,
    runner: Runner | None = None,
    remote: RemoteSpec | None = None,
    progress: ProgressSink | None = None,
    targets_dirs: Sequence[Path] = (),
    given: Collection[str] | None = None,
    override_deployment: bool = False,
) -> BenchResult:
    """:func:`benchmark` with typed settings (what the CLI, ``sweep``, ``qualify`` and manifests call).

    Args:
        model: path of a model file.
        settings: how to measure and judge.
        target: target name; None: the remote device's target, else ``local``.
        runner: where the agent runs; None: the runner ``remote`` names (built here, closed after the run).
        remote: the device to run on when no ``runner`` is given (None: this machine).
        progress: callback receiving the agent's progress events.
        targets_dirs: extra directories of target YAML files.
        given: with a deployment, the settings the caller set explicitly (None: those differing from the
            defaults); each must agree with the deployment unless ``override_deployment``.
        override_deployment: let the given settings win over the deployment's.

    Raises:
        InputError: bad model, shapes, inputs or settings; a deployment with a changed file, or a given setting
            that contradicts it (exit code 2).
        RunnerError: the agent or device failed (exit code 3).
    """
    use = open_deployment(model)  # a deployment: its model file, exactly its settings (docs/bench.md)
    if use is not None:
        settings = deployed_settings(use, settings, given=given, override=override_deployment)
        model = use.model_path
    with use_runner(runner, remote, target) as placed:  # --host / --device build an SSH runner (docs/devices.md)
        tgt = load_registry(extra_dirs=targets_dirs).get(placed.target or "local")
        result = _measure(Path(model), settings, tgt, placed.runner, progress)
    return mark_result(use, result) if use is not None else result


def _measure(model_path: Path, settings: MeasureSettings, tgt: Target, runner: Runner,
             progress: ProgressSink | None) -> BenchResult:
    """Check the settings, build the request, run it through ``runner`` and compute the metrics."""
    pkey = _percentile(settings)
    fmt = detect_format(model_path)
    local = runner.describe().local
    # Only ONNX is inspected (FLOPs, params); other formats are measured with their file hash and size alone.
    info = (inspect_once(model_path, target=tgt, shapes=settings.shapes, batch=settings.batch)
            if fmt is ModelFormat.ONNX else None)

    def attempt(picked: str | None) -> tuple[str, _dt.datetime, RawRun]:
        runtime, runtime_options = choose_runtime(fmt, tgt, picked or settings.runtime, settings.runtime_options,
                                                  local=local)
        request = agent_request(model_path, settings, tgt, runtime, runtime_options)
        started = _dt.datetime.now(_dt.timezone.utc)
        return runtime, started, raise_for_error(runner.run(request, model_path, progress), runner.name)

    # No --runtime on a device: the target's first runtime that the device has (runtime_pick.py).
    (runtime, started, raw), note = first_present(fmt, tgt, runner.name, attempt,
                                                  choose=settings.runtime is None and not local)
    if note and progress is not None:
        progress({"event": "notice", "message": note})
    budget_fps = settings.fps if settings.fps is not None else (tgt.default_fps if settings.use_target_fps else None)
    precision = info.roofline.precision if info is not None and info.roofline is not None else Precision.FP32
    ctx = MetricInputs(
        model=_model_info(model_path, fmt, info),
        target=tgt,
        runner=runner.name,
        edgeopt_version=__version__,
        flops_per_inference=(info.flops or None) if info is not None and _runs_model(runtime) else None,
        precision=precision,
        fps=budget_fps,
        percentile=pkey,
        started_at=started,
        keep_samples=settings.keep_samples,
    )
    result = build_result(raw, ctx)
    return result.model_copy(update={"warnings": [note, *result.warnings]}) if note else result


def _percentile(settings: MeasureSettings) -> str:
    """The checked percentile key, after the host-side checks of the budget, pacing and inputs.

    Raises:
        InputError: a bad percentile, a non-positive fps or pacing rate, a missing inputs file.
    """
    try:
        pkey = percentile_key(settings.percentile)
    except ValueError as exc:
        raise InputError(f"--percentile: {exc}") from None
    pacing_fps, fps, inputs = settings.pacing_fps, settings.fps, settings.inputs
    if pacing_fps is not None and not pacing_fps > 0:
        raise InputError(f"pacing_fps {pacing_fps:g}: the frame rate must be positive, e.g. 30")
    if fps is not None and fps <= 0:
        raise InputError(f"--fps {fps:g}: the frame rate must be positive, e.g. --fps 30")
    if inputs is not None and not inputs.is_file():
        raise InputError(f"inputs file {inputs} not found: pass an .npz with arrays keyed by input name")
    return pkey


def agent_request(model_path: Path, settings: MeasureSettings, tgt: Target, runtime: str,
             runtime_options: Mapping[str, Any] | None) -> Request:
    """The agent request: the settings, the chosen runtime and the energy settings for ``tgt``."""
    e = settings.energy
    energy_settings = energy_request(tgt, enabled=e.enabled, sensor=e.sensor, sysfs_root=e.sysfs_root,
                                     rate_hz=e.rate_hz, idle_s=e.idle_s, vcgencmd=e.vcgencmd)
    return Request(
        model_path=str(model_path.resolve()),
        runtime=runtime,
        runtime_options=dict(runtime_options or {}),
        warmup=settings.warmup,
        warmup_s=settings.warmup_s,
        iterations=settings.iterations,
        min_duration_s=settings.min_duration_s,
        max_duration_s=settings.max_duration_s,
        batch=settings.batch,
        threads=settings.threads,
        streams=settings.streams,
        seed=settings.seed,
        shapes={k: list(v) for k, v in settings.shapes.items()},
        inputs_npz=str(settings.inputs.resolve()) if settings.inputs is not None else None,
        energy=energy_settings,
        pacing_fps=settings.pacing_fps,
    )


def _model_info(model_path: Path, fmt: ModelFormat, info: InspectResult | None) -> ModelInfo:
    """Path, hash, size and parameter count (0 for formats that are not inspected)."""
    if info is not None:
        return ModelInfo(path=str(model_path), sha256=info.sha256, size_bytes=info.size_bytes, params=info.params)
    digest, size_bytes = model_digest(model_path, fmt)
    return ModelInfo(path=str(model_path), sha256=digest, size_bytes=size_bytes, params=0)


def _runs_model(runtime: str) -> bool:
    """Whether ``runtime`` runs the model (the null runtime does not: no FLOP-derived metrics)."""
    desc = find_runtime(runtime)
    return desc is None or desc.runs_model
