"""``edgeopt.profile``: per-layer times of one artifact on a runtime and device, joined with its ONNX graph.

Flow: resolve target, runner and runtime (a runtime without a profiler fails here, before any device work) ->
index the ONNX graph (MACs, sizes) -> the agent's ``profile`` command through the runner -> join -> result.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from edgeopt_agent.profile import cannot_profile_message, unsupported_reason
from edgeopt_agent.protocol import Request

from ..deploy.use import DeploymentUse, deployed_settings, deployment_mismatch, mismatch_text, open_deployment
from ..errors import InputError
from ..registry.lookup import ModelFormat, choose_runtime, detect_format, model_digest
from ..runners import ProgressSink, Runner
from ..runners.select import use_runner
from ..settings import MeasureSettings, RemoteSpec
from ..targets import load_registry
from ..targets.schema import Target
from .build import ProfileContext, build_profile
from .compare import compare_profiles
from .device import is_local, run_profile
from .graph import load_graph
from .headline import ROUNDS, measure_headline
from .schema import ModelRef, ProfileComparison, ProfileResult


class ProfileUnsupportedError(InputError):
    """The runtime asked for has no per-layer profiler (exit code 2); the message lists the ones that have."""


def _check_can_profile(runtime: str) -> None:
    reason = unsupported_reason(runtime)
    if reason is not None:
        raise ProfileUnsupportedError(cannot_profile_message(runtime, reason))


def _resolve(model: Path, target: str | None, targets_dirs: Sequence[Path], runtime: str | None,
             runtime_options: Mapping[str, Any] | None, runner: Any) -> tuple[Target, ModelFormat, str, dict[str, Any]]:
    """The target, the model's format, and a runtime that can profile it with its options."""
    tgt = load_registry(extra_dirs=targets_dirs).get(target or "local")
    if runtime is not None:
        _check_can_profile(runtime)  # before the format check: the answer lists the runtimes that can
    fmt = detect_format(model)
    name, options = choose_runtime(fmt, tgt, runtime, runtime_options, local=is_local(runner))
    _check_can_profile(name)
    return tgt, fmt, name, dict(options)


def _graph_path(model: Path, fmt: ModelFormat, graph: str | Path | None) -> Path | None:
    if graph is not None:
        path = Path(graph)
        if not path.is_file():
            raise InputError(f"--graph {graph}: no such file; pass the ONNX model the artifact was converted from")
        return path
    return model if fmt is ModelFormat.ONNX else None


def profile(
    model: str | Path, *, target: str | None = None, runtime: str | None = None,
    runtime_options: Mapping[str, Any] | None = None, warmup: int = 10, iterations: int = 100, threads: int = 0,
    batch: int = 1, seed: int = 0, shapes: Mapping[str, Sequence[int]] | None = None,
    inputs: str | Path | None = None, graph: str | Path | None = None, max_duration_s: float = 600.0,
    targets_dirs: Sequence[Path] = (), runner: Runner | None = None, progress: ProgressSink | None = None,
    host: str | None = None, device: str | None = None, key: str | Path | None = None, python: str | None = None,
    inventory: str | Path | None = None, known_hosts: str | Path | None = None, accept_new_host_key: bool = False,
    remote: RemoteSpec | None = None, override_deployment: bool = False, given: Collection[str] | None = None,
) -> ProfileResult:
    """Profile ``model`` layer by layer on ``target`` with the runtime's own profiler.

    The agent runs ``iterations`` inferences without the profiler (their p50 is ``unprofiled_p50_ms``), then
    loads the model again with the profiler on and runs ``iterations`` more after ``warmup``; per-layer median and
    p90 come from those. Layers are mapped back to the ONNX nodes they cover and joined with their MACs, bytes and
    the target's roofline.

    Args:
        model: the artifact (``.onnx``, OpenVINO ``.xml``, TensorRT engine...), or a deployment (folder or its
            ``deployment.json``): its model, with its runtime, options, threads, batch, shapes (docs/profile.md).
        target: target name; None: the ``device``'s target, else ``local``.
        runtime: ``onnxruntime``, ``openvino`` or ``tensorrt``; None: the target's first runtime for the format.
        runtime_options: runtime options as for ``benchmark`` (``providers``, ``device``...).
        warmup: warm-up inferences before each phase. iterations: inferences of each phase.
        threads: runtime intra-op threads (0: the runtime's default). batch, seed, shapes, inputs: as ``benchmark``.
        graph: the ONNX model to join with when ``model`` is not ONNX (e.g. the source of an OpenVINO IR).
        max_duration_s: watchdog of the whole agent call.
        targets_dirs: extra directories of target YAML files.
        runner: where the agent runs (default: local, or SSH from the remote options below).
        progress: callback receiving the agent's progress events.
        host, device, key, python, inventory, known_hosts, accept_new_host_key: remote device options, as
            ``benchmark`` (docs/devices.md); or all of them as one ``remote`` (it then wins).
        override_deployment, given: as :func:`edgeopt.bench.run_benchmark`'s (settings given must agree).

    Returns:
        The per-layer profile, layers most time first (``result.layers``, ``result.top(n)``).

    Raises:
        ProfileUnsupportedError: the runtime has no per-layer profiler (exit 2; the message lists those that have).
        InputError: bad model, shapes, inputs or options (exit 2). RunnerError: the agent or device failed (exit 3).
    """
    use = open_deployment(model)
    if use is not None:  # the deployment's model with its settings (one stream: a profile is one stream)
        d = deployed_settings(use, MeasureSettings(
            runtime=runtime, runtime_options=dict(runtime_options or {}), threads=threads, batch=batch,
            shapes={k: list(v) for k, v in (shapes or {}).items()}), given=given, override=override_deployment)
        model, runtime, runtime_options, threads, batch, shapes = use.model_path, *_deployed_values(d)
    model_path = Path(model)
    remote = remote or RemoteSpec(
        host=host, device=device, key=Path(key) if key is not None else None, python=python,
        inventory=Path(inventory) if inventory is not None else None,
        known_hosts=Path(known_hosts) if known_hosts is not None else None, accept_new_host_key=accept_new_host_key)
    with use_runner(runner, remote, target) as placed:
        runner, target = placed.runner, placed.target
        tgt, fmt, name, options = _resolve(model_path, target, targets_dirs, runtime, runtime_options, runner)
        shape_map = _checked(inputs, shapes)
        graph_path = _graph_path(model_path, fmt, graph)
        index = load_graph(graph_path, shapes=shape_map, batch=batch) if graph_path is not None else None
        digest, size_bytes = model_digest(model_path, fmt)
        request = Request(model_path=str(model_path.resolve()), runtime=name, runtime_options=dict(options),
            warmup=warmup, iterations=iterations, min_duration_s=0.0, max_duration_s=max_duration_s, batch=batch,
            threads=threads, seed=seed, shapes=shape_map, inputs_npz=str(Path(inputs).resolve()) if inputs else None,
            progress_interval_s=1.0 if progress is not None else 0.0, energy={"enabled": False})
        started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        raw = run_profile(runner, request, model_path, progress)
        ref = ModelRef(path=str(model_path), sha256=digest, size_bytes=size_bytes, format=fmt.value)
        ctx = ProfileContext(model=ref, graph=index, target=tgt, runner=str(runner.name), started_at=started)
        result = build_profile(raw, ctx)
    return _mark(use, result) if use is not None else result


def _deployed_values(d: MeasureSettings) -> tuple[str | None, dict[str, Any], int, int, dict[str, list[int]]]:
    return d.runtime, d.runtime_options, d.threads, d.batch, d.shapes


def _checked(inputs: str | Path | None, shapes: Mapping[str, Sequence[int]] | None) -> dict[str, list[int]]:
    """The shapes as lists, after checking the inputs file exists."""
    if inputs is not None and not Path(inputs).is_file():
        raise InputError(f"inputs file {inputs} not found: pass an .npz with arrays keyed by input name")
    return {k: [int(d) for d in v] for k, v in (shapes or {}).items()}


def _mark(use: DeploymentUse, result: ProfileResult) -> ProfileResult:
    """The deployment profiled, and in the notes what differs from the machine that measured it."""
    problems = deployment_mismatch(use.deployment, str(result.runtime.get("version", "")),
                                   result.environment.get("cpu_flags") or [])
    notes = [*result.notes, mismatch_text(use, problems)] if problems else list(result.notes)
    if use.deployment.streams > 1:
        notes.append(f"the deployment runs {use.deployment.streams} streams; a profile runs one")
    return result.model_copy(update={"deployment": use.ref(), "notes": notes})


_REMOTE = ("host", "device", "key", "python", "inventory", "known_hosts", "accept_new_host_key")


def _remote_spec(options: dict[str, Any]) -> RemoteSpec:
    """The remote device ``options`` name (popped from it), as :func:`profile` builds it."""
    given = {k: options.pop(k) for k in _REMOTE if k in options}
    remote = options.pop("remote", None)
    if remote is not None:
        return remote
    paths = {k: Path(given[k]) for k in ("key", "inventory", "known_hosts") if given.get(k) is not None}
    return RemoteSpec(**{**given, **paths})


def profile_vs(model: str | Path, other: str | Path, *, graph: str | Path | None = None,
               vs_graph: str | Path | None = None, rounds: int = ROUNDS, **options: Any) -> ProfileComparison:
    """Profile ``model`` (A) and ``other`` (B) with the same options on one runner, time them in ``rounds``
    interleaved rounds for the headline (:mod:`.headline`; 0: skip, the two unprofiled p50s then make it), and
    compare them layer by layer.

    Args:
        model, other: A and B (files or deployments). graph, vs_graph: :func:`profile`'s ``graph`` for each.
        rounds: interleaved rounds of A and B without the profiler (0: none).
        options: :func:`profile`'s other keyword arguments.
    """
    spec = _remote_spec(options)
    with use_runner(options.pop("runner", None), spec, options.pop("target", None)) as placed:
        shared = dict(options, runner=placed.runner, target=placed.target)
        a = profile(model, graph=graph, **shared)
        b = profile(other, graph=vs_graph, **shared)
        headline = None
        if rounds > 0:
            if options.get("progress") is not None:
                options["progress"]({"event": "phase", "phase": f"A vs B: {rounds} interleaved rounds"})
            headline = measure_headline(a, b, runner=placed.runner, target=placed.target,
                                        targets_dirs=options.get("targets_dirs", ()), inputs=options.get("inputs"),
                                        rounds=rounds)
    return compare_profiles(a, b, headline)
