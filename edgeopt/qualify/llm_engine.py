"""Qualification of an LLM spec: the model is an LLM folder, the measurement a generative bench per device.

Flow (the one-pass engine's, with LLM parts): place the targets -> the reference folder (a Hugging Face folder, an
exported folder, or an LLM zoo model built into the work dir) -> per target, the qualified folder (an LLM
``recipe`` exported with ``optimize_llm``, ``optimized``, or the exported folder itself) -> retention on the host
when gated (:mod:`.llm_retention`: vs the FP32 export on the same runtime, on ``llm.eval``) -> per device a job
(:mod:`.llm_jobs`: ``bench_llm``) -> here, per device: the LLM gates (:mod:`.llm_gates`), the history record ->
``QualifyResult`` (devices carry ``llm`` instead of ``bench``). Reports and exit codes are qualify's.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from ..bench.llm.workload import LlmWorkload
from ..fleet.artifacts import ModelRef
from ..fleet.executors import make_executor
from ..fleet.runner import run_jobs
from ..history import HistoryStore, open_store
from ..metrics.latency import PERCENTILES, required_samples
from ..registry import KindDescriptor, delivering_runtime
from ..registry.kind_spec import GENERATIVE
from ..registry.lookup import format_of_kind, model_digest
from ..settings import EnergySettings
from .device_jobs import DEADLINE_MARGIN_S, device_events
from .gate_spec import Gates
from .llm_gates import LlmGateContext, evaluate_llm, llm_target_check
from .llm_jobs import LlmQualifyJob, LlmQualifyRow
from .llm_retention import retention_or_reason
from .loader import LoadedSpec
from .options import QualifyOptions
from .outcome import (
    Clock,
    Run,
    all_pass,
    assemble,
    default_report_dir,
    error_device,
    host_facts,
    parallel_jobs,
    say_verdict,
    with_target_row,
)
from .placement import Placement, place
from .result import DeviceResult, ModelInfo, QualifyResult, RetentionResult
from .spec import LlmSpec, QualifySpec

DEFAULT_REPETITIONS = 10
Log = Callable[[str], None]


def run_llm_qualification(loaded: LoadedSpec, kind: KindDescriptor, o: QualifyOptions) -> QualifyResult:
    """The generative kind's ``qualify`` entry: measure the spec's LLM folder on each device (in parallel) and judge
    it against the LLM gates.

    Raises:
        QualifySpecError / InputError: bad spec, folder, recipe or history path (exit 2), before device work.
    """
    say = o.log or (lambda message: None)
    s = loaded.spec
    clock = Clock()
    placements = place(loaded, o.targets_dirs)
    out_dir = Path(o.report_dir) if o.report_dir is not None else default_report_dir(s.name)
    work = out_dir / "work"
    run = Run(loaded, clock, out_dir, open_store(o.history_db) if o.record else None, uuid.uuid4().hex[:12])
    reference = _reference(loaded, work, say)
    qualified: dict[str, Path] = {}
    for p in placements:
        if p.target not in qualified:
            qualified[p.target] = _qualified(loaded, reference, p.target, work, say)
    retention = {t: _retention(loaded, reference, folder, work, say) for t, folder in qualified.items()} \
        if s.gates.retention is not None else {}
    rows = _run(loaded, o, placements, qualified, say)
    devices = [_judge(s, p, row, retention.get(p.target), run.store, run.group_id if o.record else None, say)
               for p, row in zip(placements, rows, strict=True)]
    return assemble(run, devices, [p.note for p in placements if p.note], model=_model_info(s, reference, qualified),
                    retention=retention, fingerprint=_fingerprint(loaded, reference, workload(s)))


def workload(s: QualifySpec) -> LlmWorkload:
    """The spec's ``llm:`` workload; repetitions default to what the gates' percentiles need (>= 10)."""
    w = s.llm or LlmSpec()
    return LlmWorkload(prompt_tokens=tuple(w.prompt_tokens), gen_tokens=tuple(w.gen_tokens),
                       context_depth=tuple(w.context_depth), batch=tuple(w.batch), threads=tuple(w.threads),
                       repetitions=w.repetitions or needed_repetitions(s.gates, min(w.gen_tokens)),
                       warmup=w.warmup, seed=s.measure.seed, max_duration_s=s.measure.max_duration_s)


def needed_repetitions(gates: Gates, gen_tokens: int) -> int:
    """Repetitions per cell for the gated percentiles: TTFT has one reading per repetition, TPOT gen - 1."""
    reps = DEFAULT_REPETITIONS
    if gates.ttft_ms is not None:
        reps = max(reps, required_samples(PERCENTILES[gates.ttft_ms.percentile]))
    if gates.tpot_ms is not None:
        per_rep = max(1, gen_tokens - 1)
        reps = max(reps, math.ceil(required_samples(PERCENTILES[gates.tpot_ms.percentile]) / per_rep))
    return reps


def _reference(loaded: LoadedSpec, work: Path, say: Log) -> Path:
    m = loaded.spec.model
    if m.zoo is None:
        assert m.path is not None
        return loaded.resolve(m.path)
    out = work / "models" / m.zoo
    if not (out / "config.json").is_file():
        from ..zoo import build as build_zoo

        say(f"building zoo model {m.zoo} into {out}")
        build_zoo(m.zoo, out)
    return out


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


def _run(loaded: LoadedSpec, o: QualifyOptions, placements: list[Placement], qualified: dict[str, Path],
         say: Log) -> list[Any]:
    """Every placement's generative bench as a fleet job, at most ``--jobs`` at once, each within its deadline."""
    s = loaded.spec
    parallel = parallel_jobs(o.jobs, len(placements))
    deadline = o.deadline_s if o.deadline_s is not None else s.measure.max_duration_s + DEADLINE_MARGIN_S
    w = workload(s)
    energy = EnergySettings(enabled=s.measure.energy, sensor=s.measure.power_sensor)
    refs = {path: ModelRef.of(path) for path in dict.fromkeys(qualified.values())}
    jobs = [LlmQualifyJob(p, refs[qualified[p.target]], w, energy, deadline, str(qualified[p.target]),
                          targets_dirs=tuple(o.targets_dirs)) for p in placements]
    return run_jobs(jobs, parallel=parallel, executor=make_executor(o.executor),
                    progress=device_events(o.progress, say))


def _judge(s: QualifySpec, p: Placement, row: Any, retention: RetentionResult | None, store: HistoryStore | None,
           group_id: str | None, say: Log) -> DeviceResult:
    llm = row.llm if isinstance(row, LlmQualifyRow) else None
    if llm is None:
        return error_device(p, row, s.gates)
    ctx = LlmGateContext(device=p.label, bench=llm, retention=retention)
    gates = with_target_row(evaluate_llm(s.gates, ctx), llm_target_check(ctx, allowed=s.allow_target_mismatch),
                            p.label, say)
    passed = all_pass(gates)
    run_id = None
    if store is not None and group_id is not None:
        run_id = store.record_llm(llm, kind="qualify", device=p.label, verdict="pass" if passed else "fail",
                                  group_id=group_id, label=s.name).id
    say_verdict(say, p.label, gates, passed)
    return DeviceResult(label=p.label, target=p.target, runner=p.runner_name, status="ok", passed=passed, llm=llm,
                        gates=gates, history_run_id=run_id)


def _digest(folder: Path) -> str:
    return model_digest(folder, format_of_kind(folder, GENERATIVE) or "hf_llm")[0]


def _model_info(s: QualifySpec, reference: Path, qualified: dict[str, Path]) -> ModelInfo:
    source: Literal["model", "optimized", "recipe"] = "optimized" if s.optimized else "recipe" if s.recipe else "model"
    return ModelInfo(reference_path=str(reference), reference_sha256=_digest(reference),
                     qualified={t: str(f) for t, f in qualified.items()},
                     qualified_sha256={t: _digest(f) for t, f in qualified.items()}, recipe=s.recipe,
                     source=source, kind="llm")


def _fingerprint(loaded: LoadedSpec, reference: Path, w: LlmWorkload) -> dict[str, Any]:
    s = loaded.spec
    return {
        "spec_sha256": loaded.sha256, "profiles": loaded.profiles, "reference_sha256": _digest(reference),
        "recipe": s.recipe, "seed": s.measure.seed, "measure": s.measure.model_dump(mode="json"),
        "llm_workload": w.model_dump(mode="json"),
        "host": host_facts(),
    }
