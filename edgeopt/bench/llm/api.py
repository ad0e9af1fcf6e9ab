"""Run the agent's ``generate`` command on an LLM folder through a runner and type the result."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from edgeopt_agent.protocol import Request

from ...errors import InputError
from ...registry import format_registry, get_runtime
from ...runners import ProgressSink, Runner, raise_for_error
from ...runners.select import use_runner
from ...settings import RemoteSpec
from .result import LlmBenchResult, LlmLoad, LlmModelFacts
from .stats import cell_from_raw
from .workload import LlmWorkload

# Folder format -> the runtime that runs it (the format names i22-model's optimize writes).
_RUNTIME_OF = {"onnxruntime_genai": "onnxruntime_genai", "openvino_genai": "openvino_genai"}


def llm_folder_format(path: Path) -> str | None:
    """The generative folder format the registry's directory formats claim ``path`` as (``onnxruntime_genai``,
    ``openvino_genai``), or None (not a folder, or a folder no agent runtime generates with, e.g. a Hugging Face
    source folder: ``optimize`` it first)."""
    path = Path(path)
    if not path.is_dir():
        return None
    desc = next((f for f in format_registry().all() if f.directory and f.claims_directory(path)), None)
    return desc.name if desc is not None and desc.name in _RUNTIME_OF else None


def _runtime(fmt: str, runtime: str | None) -> str:
    name = runtime or _RUNTIME_OF[fmt]
    if not get_runtime(name).loads(fmt):
        raise InputError(f"--runtime {name} does not run a {fmt} (use {_RUNTIME_OF[fmt]})")
    return name


def bench_llm(folder: str | Path, workload: LlmWorkload | None = None, *, runtime: str | None = None,
              runtime_options: Mapping[str, Any] | None = None, runner: Runner | None = None,
              remote: RemoteSpec | None = None, progress: ProgressSink | None = None) -> LlmBenchResult:
    """Time the generative model in ``folder`` over ``workload``'s cells, here or on a remote device.

    Raises:
        InputError: not an LLM folder, a runtime that does not run it, a bad workload (exit 2).
        RunnerError: the agent or the device failed (exit 3).
    """
    folder = Path(folder)
    fmt = llm_folder_format(folder)
    if fmt is None:
        raise InputError(f"{folder} is not an LLM folder (no genai_config.json or openvino_model.xml): pass a folder "
                         "written by onnxruntime-genai's model builder or an OpenVINO GenAI export")
    workload = workload or LlmWorkload()
    name = _runtime(fmt, runtime)
    options = dict(runtime_options or {})
    get_runtime(name).check_options(options)
    request = Request(model_path=str(folder), runtime=name, runtime_options=options,
                      max_duration_s=workload.max_duration_s, generate=workload.request_dict())
    with use_runner(runner, remote) as placed:
        raw = raise_for_error(placed.runner.generate(request, folder, progress), placed.runner.name)
        runner_name = placed.runner.name
    gen = raw.generate
    loads = {ld["threads"]: ld for ld in gen["loads"]}
    facts = gen["model"]
    cells = [cell_from_raw(c, facts, loads[c["threads"]]["load_ms"], workload.repetitions) for c in gen["cells"]]
    return LlmBenchResult(
        model_path=str(folder.resolve()), model_format=fmt, runtime=dict(raw.runtime), runner=runner_name,
        model=LlmModelFacts(**{k: v for k, v in facts.items() if k != "kv_dtype_bytes"}), workload=workload,
        loads=[LlmLoad(threads=t, load_ms=ld["load_ms"], rss_growth_mb=_growth(ld)) for t, ld in loads.items()],
        cells=cells, truncated=bool(gen.get("truncated")), environment=dict(raw.environment),
        valid=all(c.valid for c in cells))


def _growth(load: dict[str, Any]) -> float | None:
    before, after = load.get("rss_before_kb"), load.get("rss_after_kb")
    return (after - before) / 1024.0 if before is not None and after is not None else None
