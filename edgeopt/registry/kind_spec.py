"""What edgeopt knows about one model kind, in one object: the agent command that measures it, the metrics its
results carry (name, unit, which way is better, the percentiles a gate may ask for, the physical bounds of a
value), the metric that ranks a sweep's levels, and the qualify gates that apply to it.

Two kinds ship: ``tensor`` (one-pass graph models: ONNX, OpenVINO IR, TFLite, ... timed per inference) and
``generative`` (decoder LLMs: timed per token over workload cells). A format says which kind its models are
(:class:`~edgeopt.registry.format_spec.FormatDescriptor` ``kind``) and a runtime which kinds it serves
(:class:`~edgeopt.registry.runtime_spec.RuntimeDescriptor` ``kinds``), so "which kind is this model?" is one
question to the registry (:func:`edgeopt.registry.model_kind`), never a test of a folder's files in a stage.
A third kind registers like a runtime: a descriptor module and an ``edgeopt.kinds`` entry point. It runs on the
generic engine (``engine: generic``): it reuses an agent command (``run``) with its own agent runtime and format,
and names two hooks, lazy ``module:attribute`` paths imported when first used: ``workload`` (a frozen pydantic
model of its workload settings: ``bench --workload KEY=VALUE``, a qualify spec's ``workload:`` block) and
``raw_cells`` (the agent's raw run and the workload -> cells of metric series in its own metrics). Bench, the
history, compare, qualify's ``metric`` gate and the reports read those cells (docs/architecture.md, "Adding a
model kind").
"""

from __future__ import annotations

import importlib
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .lazy import RegistryError

# The built-in kinds' names (as names.py has the built-in runtimes'): what a command dispatches on.
TENSOR = "tensor"
GENERATIVE = "generative"
# Which engine measures and judges a kind: the two built-ins keep their own result types; every other kind is
# measured, recorded, compared and gated through its cells alone (edgeopt/bench/kind_bench.py).
Engine = Literal["tensor", "generative", "generic"]
_HOOK = r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$"
# The tasks a kind names an entry point for (a descriptor field each): a command asks the model's kind for the
# entry of its task and calls it, never "which kind is this?" (docs/architecture.md, "Adding a model kind").
Task = Literal["bench_cli", "bench_api", "qualify", "qualify_check", "sweep_cli", "sweep_api", "optimize_cli",
               "optimize_api"]
TASKS: tuple[Task, ...] = ("bench_cli", "bench_api", "qualify", "qualify_check", "sweep_cli", "sweep_api",
                           "optimize_cli", "optimize_api")
# The settings models a kind may name, whose flagged fields become flags of a command (bench, sweep).
SettingsHook = Literal["workload", "sweep_options"]
# A plug-in kind's entries when its descriptor names none: the generic engine's.
GENERIC_TASKS: dict[str, str] = {
    "bench_cli": "edgeopt.cli.bench_kind_cmd:bench_generic",
    "bench_api": "edgeopt.bench.kind_bench:benchmark_generic",
    "qualify": "edgeopt.qualify.kind_engine:run_kind_qualification",
    "qualify_check": "edgeopt.qualify.kind_gates:generic_problem",
}

GENERIC_HISTORY = {"history_row": "kind_facts", "history_result": "kind_result_of"}


def _task_field(what: str) -> Any:
    return Field(default=None, pattern=_HOOK, description=f"'module:function' {what}, imported when first used; "
                 "None: the engine's default (GENERIC_TASKS for engine 'generic'), else the kind has none.")


class MetricSpec(BaseModel):
    """One metric a kind's results carry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_]*$", description="Metric name as in results and gates.")
    unit: str = Field(min_length=1, description="Unit, e.g. 'ms', 'tokens/s', 'MiB', 'mJ'.")
    higher_is_better: bool = Field(default=False, description="True for throughputs and retention.")
    percentiles: tuple[str, ...] = Field(
        default=(), description="Percentiles a gate may ask for (p50, p90, p99, ...); empty: a single value.")
    min_value: float = Field(default=0.0, description="Smallest physically possible value (inclusive).")
    min_exclusive: bool = Field(default=False, description="The smallest value itself is impossible (a time > 0).")
    max_value: float = Field(default=math.inf, description="Largest physically possible value (inclusive).")
    sampled: bool = Field(default=False, description="Results keep its raw readings (one per inference, token or "
                          "repetition): compare and its noise floor judge the metric on them.")
    min_readings: int = Field(default=20, ge=2, description="Fewest readings per run compare judges it on.")

    def admits(self, value: object) -> bool:
        """Whether ``value`` can be a measurement of this metric (:meth:`problem` is None); builds no message, so
        a device's sample lists are checked at the cost of a comparison per value."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return False
        low_ok = value > self.min_value if self.min_exclusive else value >= self.min_value
        return low_ok and value <= self.max_value

    @property
    def bound_text(self) -> str:
        """The bounds in words, for a reason: 'a finite number > 0', 'a finite number >= 0 and <= 2'."""
        text = f"a finite number {'>' if self.min_exclusive else '>='} {self.min_value:g}"
        return text if math.isinf(self.max_value) else f"{text} and <= {self.max_value:g}"

    def problem(self, value: object) -> str | None:
        """Why ``value`` cannot be a measurement of this metric (None when it can): not a finite number, or
        outside the metric's physical bounds. A run with such a value is invalid, naming the metric."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"{self.name} is not a number ({type(value).__name__})"
        if not math.isfinite(value):
            return f"{self.name} is {value} (not finite)"
        low_bad = value <= self.min_value if self.min_exclusive else value < self.min_value
        if low_bad:
            return f"{self.name} is {value:g} {self.unit} ({'<=' if self.min_exclusive else '<'} {self.min_value:g})"
        if value > self.max_value:
            return f"{self.name} is {value:g} {self.unit} (> {self.max_value:g})"
        return None


class KindHelp(BaseModel):
    """What a kind adds to the CLI's help, so that no command module names a kind: a paragraph of a command's help
    (after the command's own, in registry order), a sentence of a command's paragraph (after its own text, joined
    by a space) or a clause of an option's help (after the option's own text, each kind's joined by "; ", the
    sentence closed with "."). None: the kind adds nothing there."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bench: str | None = Field(default=None, description="A paragraph of `edgeopt bench --help`: what bench does "
                              "with a model of this kind.")
    optimize: str | None = Field(default=None, description="A paragraph of `edgeopt optimize --help`.")
    optimize_calib: str | None = Field(default=None, description="A clause of optimize's --calib help.")
    sweep_eval: str | None = Field(default=None, description="A clause of sweep's --eval help.")
    sweep_metric: str | None = Field(default=None, description="A clause of sweep's --metric help.")
    sweep_calib: str | None = Field(default=None, description="A clause of sweep's --calib help.")
    compare: str | None = Field(default=None, description="A sentence of `edgeopt compare --help`, appended to the "
                                "command's paragraph: how two runs of this kind are compared.")


HelpSlot = Literal["bench", "optimize", "optimize_calib", "sweep_eval", "sweep_metric", "sweep_calib", "compare"]


class KindDescriptor(BaseModel):
    """One model kind. Register an instance (``edgeopt.kinds`` entry point ``name = module:DESCRIPTOR``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_]*$", description="Kind name, as formats and runtimes name it.")
    summary: str = Field(min_length=3, description="One line for docs and messages.")
    agent_command: str = Field(description="The agent command that measures it ('run', 'generate').")
    metrics: tuple[MetricSpec, ...] = Field(min_length=1, description="Metrics its results carry.")
    rank_metric: str = Field(description="The metric a sweep ranks its levels by (one of metrics).")
    gates: tuple[str, ...] = Field(
        default=(), description="Qualify gate kinds that apply to a model of this kind (the spec's gate keys).")
    model_word: str = Field(default="model", description="How messages name a model of this kind.")
    run_word: str | None = Field(default=None, min_length=3, description="How messages name a run of this kind "
                                 "('an LLM bench run'); None: 'a <name> run'.")
    result_kind: str | None = Field(default=None, description="The ``kind`` its typed result writes first in a "
                                    "stored result_json ('llm_bench'): how a version-1 history row of this kind is "
                                    "told apart (history/migrate.py); None: its rows are never version-1 rows.")
    cells: str | None = Field(default=None, pattern=_HOOK, description="'module:function' that turns its typed "
                              "result into cells of metric series (edgeopt.metrics.cells), imported when first used.")
    history_row: str | None = Field(default=None, pattern=_HOOK, description="'module:function' that turns its "
                                    "typed result into the facts of its history row (edgeopt.history.bench_runs."
                                    "RunFacts); None: the generic engine's, from the rank metric of its cells.")
    history_result: str | None = Field(default=None, pattern=_HOOK, description="'module:function' that reads a "
                                       "stored result_json back as its typed result; None: the generic engine's.")
    compare_render: str | None = Field(default=None, pattern=_HOOK, description="'module:function' that prints "
                                       "`edgeopt compare` of two runs of this kind in a terminal: (comparison) -> "
                                       "None, the comparison a RunComparison (one unkeyed cell each) or a "
                                       "CellRunComparison (keyed cells); None: the renderer of the comparison's "
                                       "shape (edgeopt/cli/history_render.py).")
    engine: Engine = Field(default="generic", description="What measures it: the built-ins' own engines, or the "
                           "generic one (agent_command through the runner, raw_cells, the metric gate).")
    workload: str | None = Field(default=None, pattern=_HOOK, description="'module:Model', a frozen pydantic "
                                 "model of its workload settings: each field with a registry Flag is a flag of "
                                 "`edgeopt bench` (edgeopt/cli/kind_flags.py); on the generic engine also bench "
                                 "--workload KEY=VALUE and a qualify spec's workload: block; None: it takes none.")
    sweep_options: str | None = Field(default=None, pattern=_HOOK, description="'module:Model', its sweep's "
                                      "options (a pydantic model or a dataclass): each field with a registry Flag "
                                      "is a flag of `edgeopt sweep`; None: no sweep flags of its own.")
    raw_cells: str | None = Field(default=None, pattern=_HOOK, description="Generic engine: 'module:function' "
                                  "(raw run, workload) -> tuple of ResultCell in its metrics.")
    bench_cli: str | None = _task_field("that `edgeopt bench` calls: (kind, BenchCall) -> exit code")
    bench_api: str | None = _task_field("that `edgeopt.benchmark` calls: (model path, kind, BenchRequest) -> result")
    qualify: str | None = _task_field("that qualify calls: (LoadedSpec, kind, QualifyOptions) -> QualifyResult")
    qualify_check: str | None = _task_field("that checks a qualify spec against the kind when it is loaded: "
                                            "(spec, kind, resolve) -> (key, message) | None")
    sweep_cli: str | None = _task_field("that `edgeopt sweep` calls: (kind, the command's options) -> exit code")
    sweep_api: str | None = _task_field("that `edgeopt.sweep` calls: (model path, kind, SweepRequest) -> result")
    optimize_cli: str | None = _task_field("that `edgeopt optimize` calls: (kind, the command's options) -> "
                                           "exit code")
    optimize_api: str | None = _task_field("that `edgeopt.optimize` calls: (model, kind, its keywords) -> result")
    cli_help: KindHelp = Field(default_factory=KindHelp, description="Its fragments of the CLI's help texts "
                               "(edgeopt/cli/kind_help.py composes them).")

    @model_validator(mode="after")
    def _rank_metric_is_declared(self) -> KindDescriptor:
        if self.rank_metric not in {m.name for m in self.metrics}:
            raise ValueError(f"kind {self.name}: rank_metric {self.rank_metric!r} is not one of its metrics "
                             f"({', '.join(m.name for m in self.metrics)})")
        return self

    def load_cells(self) -> Any:
        """The function its ``cells`` path names (imported now): typed result -> tuple of ResultCell.

        Raises:
            RegistryError: no cells function declared, or the path does not import.
        """
        return self._hook("cells")

    def load_history(self, field: Literal["history_row", "history_result"]) -> Any:
        """Its ``history_row`` or ``history_result`` function (imported now), the generic engine's when it names
        none (:mod:`edgeopt.history.kind_runs`)."""
        path = getattr(self, field) or f"edgeopt.history.kind_runs:{GENERIC_HISTORY[field]}"
        return self._load(field, path)

    @property
    def run_text(self) -> str:
        """How messages name a run of this kind: its ``run_word``, else 'a <name> run'."""
        return self.run_word or f"a {self.name} run"

    def load_compare_render(self) -> Any | None:
        """Its ``compare_render`` function (imported now), None when it names none.

        Raises:
            RegistryError: the path does not import.
        """
        return None if self.compare_render is None else self._hook("compare_render")

    def load_raw_cells(self) -> Any:
        """The generic engine's ``raw_cells`` function (imported now). Raises RegistryError as :meth:`load_cells`."""
        return self._hook("raw_cells")

    def load_workload(self) -> type[BaseModel] | None:
        """The workload settings model (imported now), None when the kind takes no workload.

        Raises:
            RegistryError: the path does not import or names no pydantic model.
        """
        if self.workload is None:
            return None
        model = self._hook("workload")
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise RegistryError(f"kind {self.name}: workload {self.workload!r} is not a pydantic model class")
        return model

    def load_settings_model(self, hook: SettingsHook) -> type | None:
        """The class its ``workload`` or ``sweep_options`` path names (imported now), None when it names none;
        the fields of it that carry a :class:`~edgeopt.registry.flag_spec.Flag` are that command's flags.

        Raises:
            RegistryError: the path does not import or names no class.
        """
        if getattr(self, hook) is None:
            return None
        model = self._hook(hook)
        if not isinstance(model, type):
            raise RegistryError(f"kind {self.name}: {hook} {getattr(self, hook)!r} is not a class")
        return model

    def task_path(self, task: Task) -> str | None:
        """The ``module:function`` of its ``task`` entry: its own, else its engine's default; None: it has none."""
        own = getattr(self, task)
        return own if own is not None else (GENERIC_TASKS.get(task) if self.engine == "generic" else None)

    def load_task(self, task: Task) -> Any:
        """Its ``task`` entry (imported now).

        Raises:
            RegistryError: it has no entry for ``task`` (naming the kind and the task), or the path does not load.
        """
        path = self.task_path(task)
        if path is None:
            raise RegistryError(f"kind {self.name} has no {task.replace('_', ' ')} entry: a {self.name} model "
                                f"({self.summary}) cannot go through this command; its descriptor may add "
                                f"{task}='module:function' (docs/architecture.md)")
        return self._load(task, path)

    def _hook(self, field: str) -> Any:
        path = getattr(self, field)
        if path is None:
            raise RegistryError(f"kind {self.name} declares no {field} function: add {field}='module:function' to "
                                "its descriptor")
        return self._load(field, path)

    def _load(self, field: str, path: str) -> Any:
        module, _, attr = path.partition(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise RegistryError(f"kind {self.name}: {field} {path!r} does not load ({exc})") from None

    def sampled_metrics(self) -> tuple[MetricSpec, ...]:
        """The metrics compare judges on raw readings, in declared order."""
        return tuple(m for m in self.metrics if m.sampled)

    def metric(self, name: str) -> MetricSpec:
        """The metric ``name``. Raises KeyError naming the known ones when it is not declared."""
        for m in self.metrics:
            if m.name == name:
                return m
        raise KeyError(f"kind {self.name} has no metric {name!r}; its metrics: "
                       f"{', '.join(m.name for m in self.metrics)}")
