"""Run the agent's ``generate`` command on an LLM folder through a runner and type the result."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from edgeopt_agent.protocol import Request

from ...deploy.use import mark_any, open_deployment
from ...errors import InputError
from ...metrics.energy import energy_request
from ...metrics.target_match import target_mismatch
from ...registry import KindDescriptor, delivering_runtime, format_registry, get_runtime
from ...registry.kind_spec import GENERATIVE
from ...registry.lookup import format_of_kind
from ...runners import ProgressSink, Runner, raise_for_error
from ...runners.select import use_runner
from ...settings import EnergySettings, RemoteSpec
from ...targets import Target, load_registry
from ..request import BenchRequest
from .deployed import deployed_run
from .energy import load_energy, load_trace
from .raw_check import accept_generate, load_reasons
from .result import LlmBenchResult, LlmEnergy, LlmLoad, LlmModelFacts
from .stats import cell_from_raw, kv_probe
from .workload import LlmWorkload

OVERRIDE_KEYWORD = "override_deployment=True"


def _not_generative(folder: Path) -> str:
    """One line: ``folder`` is no generative model, what would be (every deployable generative format's marker)."""
    marks = [f.entry_file or "/".join(f.suffixes) or f.name for f in format_registry().all()
             if f.kind == GENERATIVE and f.deployable and delivering_runtime(f.name) is not None]
    return (f"{folder} is not an LLM folder (no {' or '.join(marks)}): pass a folder written by 'edgeopt optimize "
            "LLM_DIR' (or by onnxruntime-genai's model builder or an OpenVINO GenAI export)")


def _runtime(fmt: str, runtime: str | None) -> str:
    native = delivering_runtime(fmt)
    name = runtime or (native.name if native is not None else fmt)
    if not get_runtime(name).loads(fmt):
        raise InputError(f"--runtime {name} does not run a {fmt} (use {native.name if native else 'its runtime'})")
    return name


def bench_llm(folder: str | Path, workload: LlmWorkload | None = None, *, runtime: str | None = None,
              runtime_options: Mapping[str, Any] | None = None, runner: Runner | None = None,
              remote: RemoteSpec | None = None, progress: ProgressSink | None = None, target: str | None = None,
              energy: EnergySettings | None = None, targets_dirs: Sequence[Path] = ()) -> LlmBenchResult:
    """Time the generative model in ``folder`` over ``workload``'s cells, here or on a remote device.

    Args:
        target: target name (None: the remote device's, else ``local``); its power sensor is tried first and its
            TDP backs an energy estimate where no sensor is read.
        energy: power measurement settings (default: on, ``auto``); energy per token per phase (docs/llm-bench.md).

    Raises:
        InputError: not an LLM folder, a runtime that does not run it, a bad workload (exit 2).
        RunnerError: the agent or the device failed (exit 3).
    """
    folder = Path(folder)
    fmt = format_of_kind(folder, GENERATIVE, deployable=True)
    if fmt is None:
        raise InputError(_not_generative(folder))
    workload = workload or LlmWorkload()
    name = _runtime(fmt, runtime)
    options = dict(runtime_options or {})
    get_runtime(name).check_options(options)
    e = energy or EnergySettings()
    with use_runner(runner, remote, target) as placed:
        tgt = load_registry(extra_dirs=targets_dirs).get(placed.target or "local")
        request = Request(model_path=str(folder), runtime=name, runtime_options=options,
                          max_duration_s=workload.max_duration_s, generate=workload.request_dict(),
                          energy=_energy_request(tgt, e))
        raw = raise_for_error(placed.runner.generate(request, folder, progress), placed.runner.name)
        runner_name = placed.runner.name
        accept_generate(raw.generate, runner_name, cells=math.prod(len(axis) for axis in (
            workload.prompt_tokens, workload.gen_tokens, workload.context_depth, workload.batch, workload.threads)))
    return _result(raw, folder, fmt, workload, runner_name, tgt)


def benchmark_generative(model: Path, kind: KindDescriptor, r: BenchRequest) -> LlmBenchResult:
    """The generative kind's ``bench_api`` entry (:func:`edgeopt.benchmark` on an LLM folder): :func:`bench_llm`
    over the request's workload (an ``LlmWorkload`` or a mapping of its fields; default: one cell at the keywords'
    threads and batch, seeded by ``seed``, within ``max_duration_s``); a deployment runs as measured.

    Raises:
        InputError: not an LLM folder, a bad workload, a setting that contradicts a deployment (exit 2).
        RunnerError: the agent or the device failed (exit 3).
    """
    s, asked = r.settings, r.workload_fields()
    fields = {"threads": (s.threads,), "batch": (s.batch,), "seed": s.seed, "max_duration_s": s.max_duration_s,
              **asked}
    try:
        workload = LlmWorkload.model_validate(fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(f"workload {'.'.join(str(p) for p in err['loc'])}: {err['msg']} (LlmWorkload's fields: "
                         f"{', '.join(LlmWorkload.model_fields)})") from None
    runtime, options = s.runtime, dict(s.runtime_options)
    use = open_deployment(model)  # None for a plain folder; a changed file is exit 2 here
    if use is not None:
        # as a one-pass deployment: a keyword left at its default is not given (explicit_settings)
        given_threads = workload.threads if "threads" in asked or s.threads != 0 else ()
        given_batch = workload.batch if "batch" in asked or s.batch != 1 else ()
        model, runtime, options, threads, batch = deployed_run(use, runtime, options, given_threads, given_batch,
                                                               r.override_deployment, OVERRIDE_KEYWORD)
        workload = workload.model_copy(update={"threads": threads, "batch": batch})
    result = bench_llm(model, workload, runtime=runtime, runtime_options=options, runner=r.runner, remote=r.remote,
                       progress=r.progress, target=r.target, energy=s.energy, targets_dirs=r.targets_dirs)
    if use is not None:
        result = mark_any(use, result, str(result.runtime.get("version", "")),
                          result.environment.get("cpu_flags") or [])
    return result


def _energy_request(tgt: Target, e: EnergySettings) -> dict[str, Any]:
    return energy_request(tgt, enabled=e.enabled, sensor=e.sensor, sysfs_root=e.sysfs_root, rate_hz=e.rate_hz,
                          idle_s=e.idle_s, vcgencmd=e.vcgencmd)


def _result(raw: Any, folder: Path, fmt: str, workload: LlmWorkload, runner_name: str, tgt: Target
            ) -> LlmBenchResult:
    gen = raw.generate
    loads = {ld["threads"]: ld for ld in gen["loads"]}
    sound = {t: not load_reasons(ld) for t, ld in loads.items()}  # else its cells say why, without its figures
    powers: dict[int, LlmEnergy | None] = {t: load_energy(ld.get("power"), tgt) if sound[t] else None
                                           for t, ld in loads.items()}
    facts = gen["model"]
    probes = {t: kv_probe(ld.get("kv_probe")) for t, ld in loads.items()}
    cells = [cell_from_raw(c, facts, loads[c["threads"]]["load_ms"] if sound[c["threads"]] else None,
                           workload.repetitions, powers[c["threads"]], probes[c["threads"]],
                           loads[c["threads"]].get("trim"), loads[c["threads"]]) for c in gen["cells"]]
    return LlmBenchResult(
        model_path=str(folder.resolve()), model_format=fmt, runtime=dict(raw.runtime), runner=runner_name,
        target=tgt.name, target_mismatch=target_mismatch(tgt, raw.environment),
        model=LlmModelFacts(**{k: v for k, v in facts.items() if k != "kv_dtype_bytes"}),
        workload=workload,
        loads=[LlmLoad(threads=t, load_ms=ld["load_ms"] if sound[t] else None,
                       rss_growth_mb=_growth(ld) if sound[t] else None, energy=powers[t],
                       trace=load_trace(ld.get("trace")), kv_probe=probes[t]) for t, ld in loads.items()],
        cells=cells, truncated=bool(gen.get("truncated")), environment=dict(raw.environment),
        valid=bool(cells) and all(c.valid for c in cells))


def _growth(load: dict[str, Any]) -> float | None:
    before, after = load.get("rss_before_kb"), load.get("rss_after_kb")
    return (after - before) / 1024.0 if before is not None and after is not None else None
