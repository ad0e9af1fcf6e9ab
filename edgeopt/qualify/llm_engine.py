"""The generative kind's qualify plan: an LLM folder (or an LLM deployment) measured by a generative bench per
device, judged by the LLM gates; the flow around it (placement, jobs, deployment rows, history, result) is
:mod:`.flow`'s, as for every kind.

Host side: the reference folder (a Hugging Face folder, an exported folder, a deployment a sweep wrote, or an LLM
zoo model built into the work dir) -> per target, the qualified folder (an LLM ``recipe`` exported with
``optimize_llm``, ``optimized``, or the exported folder itself) -> retention on the host when gated
(:mod:`.llm_retention`: vs the FP32 export on the same runtime, on ``llm.eval``) -> a deployment's runtime, options,
threads and batch applied to the workload (a spec value that contradicts them is a spec error). Per device:
``bench_llm`` (:class:`LlmMeasurement`); the LLM gates (:mod:`.llm_gates`); the history record. Devices carry
``llm`` instead of ``bench``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..bench.llm.deployed import deployed_run
from ..bench.llm.result import LlmBenchResult
from ..bench.llm.workload import LlmWorkload
from ..deploy.use import DeploymentUse, open_deployment
from ..fleet.jobs import EventSink
from ..history import HistoryStore
from ..metrics.latency import PERCENTILES, required_samples
from ..registry import KindDescriptor, delivering_runtime
from ..registry.kind_spec import GENERATIVE
from ..registry.lookup import format_of_kind, model_digest
from ..runners import Runner
from ..settings import EnergySettings
from . import flow
from .device_jobs import Measurement, log
from .gate_spec import Gates
from .llm_gates import LlmGateContext, evaluate_llm
from .llm_retention import retention_or_reason
from .loader import LoadedSpec
from .options import QualifyOptions
from .outcome import host_facts
from .placement import Placement
from .result import GateResult, ModelInfo, QualifyResult, RetentionResult
from .spec import LlmSpec, QualifySpec
from .workload_spec import workload_values

DEFAULT_REPETITIONS = 10
Log = Callable[[str], None]
# Spec keys of the settings an LLM deployment fixes (how a conflict names them).
_SPEC_KEYS = {"runtime": "llm.runtime", "threads": "llm.threads", "batch": "llm.batch"}


def run_llm_qualification(loaded: LoadedSpec, kind: KindDescriptor, o: QualifyOptions) -> QualifyResult:
    """The generative kind's ``qualify`` entry: measure the spec's LLM folder on each device (in parallel) and judge
    it against the LLM gates.

    Raises:
        QualifySpecError / InputError: bad spec, folder, recipe or history path; a spec setting that contradicts a
            deployment's (exit 2), before device work.
    """
    return flow.qualify_flow(loaded, o, _plan)


def _plan(start: flow.Start) -> GenerativePlan:
    loaded, say, work = start.loaded, start.say, start.work
    s = loaded.spec
    reference, use = _reference(loaded, work, say)
    if s.optimized:
        use = open_deployment(loaded.resolve(s.optimized))
    w, runtime, options = _deployed(loaded, use, workload(s))
    fixed = use.folder if use is not None else None  # a deployment is qualified as it is, on every target
    qualified, by_target, retention = flow.per_target(
        start, lambda target: fixed or _qualified(loaded, reference, target, work, say),
        (lambda folder: _retention(loaded, reference, folder, work, say)) if s.gates.retention is not None else None)
    energy = EnergySettings(enabled=s.measure.energy, sensor=s.measure.power_sensor)
    model = _model_info(s, reference, by_target)
    return GenerativePlan(qualified=qualified, model=model,
                          fingerprint=flow.fingerprint(loaded, model, host_facts(), recipe=s.recipe,
                                                  llm_workload=w.model_dump(mode="json")),
                          retention=retention, deployment=use, gates=s.gates,
                          measure=LlmMeasurement(w, energy, runtime, options))


def workload(s: QualifySpec) -> LlmWorkload:
    """The spec's ``llm:`` workload: its keys derived from the workload model (:mod:`.workload_spec`), its own
    ``batch``/``threads``, ``measure``'s seed and watchdog; repetitions default to what the gates' percentiles need
    (>= 10)."""
    w = s.llm or LlmSpec()
    out = LlmWorkload.model_validate({**workload_values(w, LlmWorkload), "batch": tuple(w.batch),
                                      "threads": tuple(w.threads), "seed": s.measure.seed,
                                      "max_duration_s": s.measure.max_duration_s})
    if w.repetitions is None:
        out = out.model_copy(update={"repetitions": needed_repetitions(s.gates, min(out.gen_tokens))})
    return out


def needed_repetitions(gates: Gates, gen_tokens: int) -> int:
    """Repetitions per cell for the gated percentiles: TTFT has one reading per repetition, TPOT gen - 1."""
    reps = DEFAULT_REPETITIONS
    if gates.ttft_ms is not None:
        reps = max(reps, required_samples(PERCENTILES[gates.ttft_ms.percentile]))
    if gates.tpot_ms is not None:
        per_rep = max(1, gen_tokens - 1)
        reps = max(reps, math.ceil(required_samples(PERCENTILES[gates.tpot_ms.percentile]) / per_rep))
    return reps


def _reference(loaded: LoadedSpec, work: Path, say: Log) -> tuple[Path, DeploymentUse | None]:
    """The spec's model folder (a deployment's folder, with the deployment), or its zoo model built into work."""
    m = loaded.spec.model
    if m.zoo is None:
        assert m.path is not None
        use = open_deployment(loaded.resolve(m.path))
        return (use.folder, use) if use is not None else (loaded.resolve(m.path), None)
    out = work / "models" / m.zoo
    if not (out / "config.json").is_file():
        from ..zoo import build as build_zoo

        say(f"building zoo model {m.zoo} into {out}")
        build_zoo(m.zoo, out)
    return out, None


def _deployed(loaded: LoadedSpec, use: DeploymentUse | None, w: LlmWorkload,
              ) -> tuple[LlmWorkload, str | None, dict[str, Any]]:
    """The workload with a deployment's threads and batch, and its runtime and options (as ``bench`` of the
    deployment, :func:`~edgeopt.bench.llm.deployed.deployed_run`): a value the spec's ``llm:`` sets must agree
    unless ``override_deployment``.

    Raises:
        QualifySpecError: llm.runtime, llm.threads or llm.batch that contradicts the deployment (exit 2).
    """
    s = loaded.spec
    if use is None:
        return w, s.llm.runtime if s.llm is not None else None, {}
    given = s.llm.model_fields_set & set(_SPEC_KEYS) if s.llm is not None else set()
    asked = {k: getattr(s.llm, k) if k in given else None for k in _SPEC_KEYS}
    with flow.deployment_conflict(loaded, given, _SPEC_KEYS):
        _, runtime, options, threads, batch = deployed_run(
            use, asked["runtime"], {}, asked["threads"] or (), asked["batch"] or (), s.override_deployment,
            flow.OVERRIDE_KEY, names=_SPEC_KEYS)
    return w.model_copy(update={"threads": threads, "batch": batch}), runtime, options


def _qualified(loaded: LoadedSpec, reference: Path, target: str, work: Path, say: Log) -> Path:
    """The folder to qualify on ``target``: ``optimized``, the exported ``model`` itself, or the recipe's export."""
    s = loaded.spec
    want = s.llm.runtime if s.llm is not None else None
    if s.optimized:
        return _check_runtime(loaded, loaded.resolve(s.optimized), want, ("optimized",))
    if format_of_kind(reference, GENERATIVE) != "hf_llm":
        if s.recipe:
            raise loaded.error(("recipe",), f"{reference} is an exported folder, qualified as it is: drop 'recipe', "
                                            "or point model.path at the Hugging Face folder it came from")
        return _check_runtime(loaded, reference, want, ("model", "path"))
    if not s.recipe:
        raise loaded.error(("recipe",), f"{reference} is a Hugging Face folder: add an LLM recipe (recipe: int4; "
                                        "recipes/llm/) or 'optimized: FOLDER' (an exported folder)")
    from ..llm.optimize import optimize_llm

    recipe: str | Path = loaded.resolve(s.recipe) if s.recipe.endswith((".yaml", ".yml")) else s.recipe
    out = work / "optimized" / target
    say(f"exporting {reference.name} with LLM recipe {s.recipe} for target {target} into {out}")
    result = optimize_llm(reference, target=target, recipe=recipe, out_dir=out)
    folders = {str(_runtime_of(str(a.format))): Path(a.path) for a in result.artifacts}
    if want is not None and want not in folders:
        raise loaded.error(("llm", "runtime"), f"recipe {s.recipe} builds {', '.join(folders)}, not {want}")
    return folders[want] if want is not None else next(iter(folders.values()))


def _runtime_of(fmt: str | None) -> str | None:
    """The runtime that runs a folder of format ``fmt`` (the one delivering it; llama.cpp's is ``gguf``)."""
    if fmt is None:
        return None
    desc = delivering_runtime(fmt)
    return desc.name if desc is not None else fmt


def _check_runtime(loaded: LoadedSpec, folder: Path, want: str | None, key: tuple[str, ...]) -> Path:
    fmt = format_of_kind(folder, GENERATIVE)
    runtime = _runtime_of(fmt)
    if want is not None and runtime != want:
        what = f"an {fmt} folder" if runtime == fmt else f"a {fmt} model (run by {runtime})"
        raise loaded.error(("llm", "runtime"), f"{folder} is {what}, not {want} ({'.'.join(key)})")
    return folder


def _retention(loaded: LoadedSpec, reference: Path, candidate: Path, work: Path, say: Log) -> RetentionResult:
    s = loaded.spec
    text = loaded.resolve(s.llm.eval) if s.llm is not None and s.llm.eval else None
    say(f"retention of {candidate.name} vs {reference.name} on the host")
    if text is not None and not text.is_file():
        raise loaded.error(("llm", "eval"), f"held-out text {text} not found: give a UTF-8 text file")
    result = retention_or_reason(reference, candidate, text=text, work=work / "reference")
    for note in result.notes if result.retention is None else []:
        say(f"retention: {note}")
    return result


@dataclass(frozen=True)
class LlmMeasurement(Measurement):
    """``bench_llm`` of the qualified folder over the workload, with the runtime and options it runs (a
    deployment's, or the folder's own runtime)."""

    workload: LlmWorkload
    energy: EnergySettings
    runtime: str | None = None
    runtime_options: dict[str, Any] = field(default_factory=dict)

    def __call__(self, runner: Runner, model: Path, p: Placement, progress: EventSink | None,
                 targets_dirs: Sequence[Path]) -> tuple[Any, ...]:
        from ..bench.llm import bench_llm  # the heavy stack loads on the worker, once

        log(progress, f"{p.label}: generative bench of {model.name} on {p.target} ({p.runner_name})")
        return (bench_llm(model, self.workload, runtime=self.runtime, runtime_options=self.runtime_options,
                          runner=runner, progress=progress, target=p.target, energy=self.energy,
                          targets_dirs=targets_dirs),)

    def labelled(self, result: Any, path: str) -> Any:
        return result.model_copy(update={"model_path": path})


@dataclass(kw_only=True)
class GenerativePlan(flow.KindPlan):
    """The generative kind's plan: its measurement, the LLM gates, the LLM history record."""

    gates: Gates

    def judge(self, p: Placement, runs: tuple[Any, ...], retention: RetentionResult | None,
              store: HistoryStore | None, warnings: list[str]) -> tuple[list[GateResult], dict[str, Any]]:
        llm: LlmBenchResult = runs[0]
        return evaluate_llm(self.gates, LlmGateContext(device=p.label, bench=llm, retention=retention)), {"llm": llm}


def _digest(folder: Path) -> str:
    return model_digest(folder, format_of_kind(folder, GENERATIVE) or "hf_llm")[0]


def _model_info(s: QualifySpec, reference: Path, qualified: dict[str, Path]) -> ModelInfo:
    source: Literal["model", "optimized", "recipe"] = "optimized" if s.optimized else "recipe" if s.recipe else "model"
    return flow.model_info(reference, qualified, _digest, recipe=s.recipe, source=source, kind="llm")
