"""``edgeopt.benchmark``: measure a model on a target through the device agent.

Flow: inspect the model (bad input fails here, before any device work) -> build the agent request ->
runner (local subprocess or SSH) -> raw run -> metrics (statistics, validity, FPS budget, roofline share).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from edgeopt_agent.protocol import Request

from ._version import __version__
from .analysis import inspect_model
from .enums import Precision
from .errors import InputError
from .formats import ModelFormat, choose_runtime, detect_format, model_digest
from .metrics.compute import MetricInputs, build_result
from .metrics.energy import energy_request
from .metrics.latency import percentile_key
from .metrics.result import BenchResult, ModelInfo
from .runners import LocalRunner, ProgressSink, Runner, raise_for_error
from .runners.select import choose_runner
from .targets import load_registry


def benchmark(
    model: str | Path,
    *,
    target: str | None = None,
    fps: float | None = None,
    use_target_fps: bool = True,
    percentile: str = "p99",
    iterations: int = 200,
    min_duration_s: float = 2.0,
    max_duration_s: float = 600.0,
    warmup: int = 10,
    warmup_s: float = 0.0,
    threads: int = 0,
    streams: int = 1,
    batch: int = 1,
    seed: int = 0,
    shapes: Mapping[str, Sequence[int]] | None = None,
    inputs: str | Path | None = None,
    runtime: str | None = None,
    runtime_options: Mapping[str, Any] | None = None,
    targets_dirs: Sequence[Path] = (),
    runner: Runner | None = None,
    progress: ProgressSink | None = None,
    keep_samples: bool = False,
    energy: bool = True,
    power_sensor: str = "auto",
    sysfs_root: str | Path = "/",
    power_rate_hz: float = 20.0,
    power_idle_s: float = 0.5,
    vcgencmd: str = "vcgencmd",
    host: str | None = None,
    device: str | None = None,
    key: str | Path | None = None,
    python: str | None = None,
    inventory: str | Path | None = None,
    known_hosts: str | Path | None = None,
    accept_new_host_key: bool = False,
    pacing_fps: float | None = None,
) -> BenchResult:
    """Benchmark ``model`` on ``target`` and check it against an FPS budget.

    Args:
        model: path of an ONNX model.
        target: target name (``edgeopt targets`` lists them); None: the ``device``'s target, else ``local``.
        fps: real-time budget; None uses the target's ``default_fps`` when ``use_target_fps``.
        use_target_fps: fall back to the target's default FPS budget when ``fps`` is None.
        percentile: latency percentile checked against the budget (``p50``..``p999``).
        iterations: minimum timed inferences per stream.
        min_duration_s: minimum duration of the timed phase (both minima are met).
        max_duration_s: watchdog on the timed phase; a truncated run is marked invalid.
        warmup: minimum warm-up inferences. warmup_s: minimum warm-up seconds.
        threads: runtime intra-op threads (0: runtime default). streams: concurrent inference streams.
        batch: batch size for a dynamic leading dimension. seed: seed of generated inputs.
        shapes: concrete shapes of inputs with dynamic dims, by input name.
        inputs: ``.npz`` of input arrays keyed by input name (instead of generated data).
        runtime: agent runtime (``onnxruntime``, ``openvino``, ``tflite``, ``tensorrt``, ``coreml``, or ``null`` to
            measure the harness itself); None picks the target's first runtime that loads the model's format.
        runtime_options: runtime-specific options, e.g. ``{"providers": ["CPUExecutionProvider"]}``.
        targets_dirs: extra directories of target YAML files.
        runner: where the agent runs (default: :class:`LocalRunner`).
        progress: callback receiving the agent's progress events.
        keep_samples: include every per-inference latency in the result.
        energy: measure energy per inference (or estimate it from the target's TDP when no sensor is found);
            False leaves ``result.energy`` null.
        power_sensor: ``auto`` (the target's sensor first, then whatever the device has), ``none`` (estimate
            only), or ``ina3221``, ``rapl``, ``rpi5_pmic``, ``hwmon``.
        sysfs_root: where the agent reads ``/sys`` on the device; for tests and emulated sensor trees.
        power_rate_hz: power readings per second during the timed phase.
        power_idle_s: idle baseline window before warm-up, seconds (0: none; no energy above idle then).
        vcgencmd: path of ``vcgencmd`` on a Raspberry Pi 5 (``rpi5_pmic``).
        host: run on ``user@addr[:port]`` over SSH. device: run on this device of the inventory.
        key: private key file. python: the agent's interpreter (remote default ``/usr/bin/python3``).
        inventory: devices file (default ``EDGEOPT_INVENTORY`` or ``./devices.yaml``).
        known_hosts: trusted host keys (default ``~/.ssh/known_hosts``).
        accept_new_host_key: trust and record a host key seen for the first time (docs/devices.md).
        pacing_fps: issue frames at this rate instead of back to back (``iterations`` is then the minimum
            number of frames); ``result.deadline`` counts frames that missed their 1/fps deadline.

    Returns:
        The typed result; ``result.passed`` says whether the run is valid and met its budget.

    Raises:
        InputError: bad model, shapes, inputs or settings (exit code 2).
        RunnerError: the agent or device failed (exit code 3).
    """
    model_path = Path(model)
    if runner is None:  # remote options (docs/devices.md): --host / --device build an SSH runner
        choice = choose_runner(host=host, device=device, key=key, python=python, inventory=inventory,
                               known_hosts=known_hosts, accept_new_host_key=accept_new_host_key)
        runner, target = choice.runner, target or choice.target
    tgt = load_registry(extra_dirs=targets_dirs).get(target or "local")
    try:
        pkey = percentile_key(percentile)
    except ValueError as exc:
        raise InputError(f"--percentile: {exc}") from None
    if pacing_fps is not None and not pacing_fps > 0:
        raise InputError(f"pacing_fps {pacing_fps:g}: the frame rate must be positive, e.g. 30")
    if fps is not None and fps <= 0:
        raise InputError(f"--fps {fps:g}: the frame rate must be positive, e.g. --fps 30")
    if inputs is not None and not Path(inputs).is_file():
        raise InputError(f"inputs file {inputs} not found: pass an .npz with arrays keyed by input name")
    shape_map = {k: [int(d) for d in v] for k, v in (shapes or {}).items()}
    energy_settings = energy_request(tgt, enabled=energy, sensor=power_sensor, sysfs_root=sysfs_root,
                                     rate_hz=power_rate_hz, idle_s=power_idle_s, vcgencmd=vcgencmd)
    fmt = detect_format(model_path)
    runtime, runtime_options = choose_runtime(fmt, tgt, runtime, runtime_options,
                                              local=runner is None or isinstance(runner, LocalRunner))
    # Only ONNX is inspected (FLOPs, params); other formats are measured with their file hash and size alone.
    info = inspect_model(model_path, target=tgt, shapes=shape_map, batch=batch) if fmt is ModelFormat.ONNX else None
    request = Request(
        model_path=str(model_path.resolve()),
        runtime=runtime,
        runtime_options=dict(runtime_options or {}),
        warmup=warmup,
        warmup_s=warmup_s,
        iterations=iterations,
        min_duration_s=min_duration_s,
        max_duration_s=max_duration_s,
        batch=batch,
        threads=threads,
        streams=streams,
        seed=seed,
        shapes=shape_map,
        inputs_npz=str(Path(inputs).resolve()) if inputs is not None else None,
        energy=energy_settings,
        pacing_fps=pacing_fps,
    )
    run_with = runner or LocalRunner()
    started = _dt.datetime.now(_dt.timezone.utc)
    raw = raise_for_error(run_with.run(request, model_path, progress), run_with.name)
    budget_fps = fps if fps is not None else (tgt.default_fps if use_target_fps else None)
    precision = info.roofline.precision if info is not None and info.roofline is not None else Precision.FP32
    if info is not None:
        model_info = ModelInfo(path=str(model_path), sha256=info.sha256, size_bytes=info.size_bytes, params=info.params)
    else:
        digest, size_bytes = model_digest(model_path, fmt)
        model_info = ModelInfo(path=str(model_path), sha256=digest, size_bytes=size_bytes, params=0)
    ctx = MetricInputs(
        model=model_info,
        target=tgt,
        runner=run_with.name,
        edgeopt_version=__version__,
        flops_per_inference=(info.flops or None) if info is not None and runtime != "null" else None,
        precision=precision,
        fps=budget_fps,
        percentile=pkey,
        started_at=started,
        keep_samples=keep_samples,
    )
    return build_result(raw, ctx)
