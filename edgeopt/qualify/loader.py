"""Read a qualification spec: YAML -> profiles applied (``extends``) -> typed :class:`QualifySpec` -> checks.

Every problem is a :class:`QualifySpecError` naming the FILE, LINE and KEY (``spec.yaml:12: gates.latency.max_ms:
...``), pointing into the profile file when the bad value came from a profile.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from ..deploy.io import DeploymentError
from ..deploy.use import open_deployment
from ..errors import InputError, SchemaProblem
from ..metrics.deadline import frames_required
from ..recipes.yaml_lines import Path_, line_of, load_with_lines, read_yaml_with_lines
from ..settings import MAX_ITERATIONS
from ..yamlio import YamlLimitError, read_text
from ..zoo import names as zoo_names
from .gate_spec import GATE_KINDS, Gates
from .kind_check import kind_problem
from .spec import QualifySpec

PROFILES_DIR = Path(__file__).resolve().parent / "profiles"
_HINT = "see docs/qualify.md"
_YAML_SUFFIXES = (".yaml", ".yml")


class QualifySpecError(InputError):
    """A spec or profile file is unreadable, not YAML, or does not match the schema (message: file:line: key)."""


@dataclass(frozen=True)
class _Source:
    """One YAML document with its key-path -> line map."""

    path: Path
    data: Any
    lines: dict[Path_, int]
    echo: bool = True  # False for a profile read through ``extends``: its keys and values are never quoted

    def where(self, key: Path_) -> str:
        line = line_of(self.lines, key)
        name = ".".join(str(k) for k in key) or "(top level)"
        return f"{self.path}:{line}: {name}" if line is not None else f"{self.path}: {name}"


@dataclass(frozen=True)
class LoadedSpec:
    """A validated spec, where it came from, and how to resolve its relative paths."""

    spec: QualifySpec
    path: Path
    sha256: str
    profiles: list[str] = field(default_factory=list)
    lines: dict[Path_, int] = field(default_factory=dict)

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    def resolve(self, value: str | Path) -> Path:
        """A path from the spec: absolute as written, else relative to the spec file's directory."""
        p = Path(value).expanduser()
        return p if p.is_absolute() else self.base_dir / p

    def error(self, key: Path_, message: str) -> QualifySpecError:
        """A spec error at ``key`` (for problems found after loading, e.g. an unknown target name)."""
        return QualifySpecError(f"{_Source(self.path, None, self.lines).where(key)}: {message}")


def profile_names() -> list[str]:
    """Names of the shipped gate profiles."""
    return sorted(p.stem for p in PROFILES_DIR.iterdir() if p.suffix in _YAML_SUFFIXES)


def _read(path: Path, what: str) -> _Source:
    data, lines = read_yaml_with_lines(path, f"the {what}", QualifySpecError)
    if not isinstance(data, dict):
        raise QualifySpecError(f"{path}: a {what} is a YAML mapping ({_HINT})")
    return _Source(path, data, lines)


def _profile_path(ref: str, spec: _Source, index: int) -> Path:
    """The gate-profile file ``ref`` names: a shipped profile's name, or a path ending ``.yaml``/``.yml``.

    Only such files are read: ``extends: [../../../../etc/shadow]`` is refused before anything is opened
    (docs/reliability.md, "Untrusted files").
    """
    as_path = Path(ref).expanduser()
    if as_path.suffix in _YAML_SUFFIXES:
        full = as_path if as_path.is_absolute() else spec.path.parent / as_path
        if full.is_file():
            return full
        raise QualifySpecError(f"{spec.where(('extends', index))}: profile file {full} not found; check the path")
    if "/" in ref or "\\" in ref:
        raise QualifySpecError(f"{spec.where(('extends', index))}: {ref!r} is not a gate profile: extends names a "
                               f"shipped profile ({', '.join(profile_names())}) or a profile file ending .yaml or "
                               ".yml")
    if (PROFILES_DIR / f"{ref}.yaml").is_file():
        return PROFILES_DIR / f"{ref}.yaml"
    close = difflib.get_close_matches(ref, profile_names(), n=1, cutoff=0.5)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    raise QualifySpecError(f"{spec.where(('extends', index))}: unknown profile '{ref}'{hint}; shipped profiles: "
                           f"{', '.join(profile_names())}, or a path to a profile YAML file")


def _read_profile(path: Path) -> _Source:
    """A gate profile, whose errors name the file and the line but never quote it: ``extends`` may point at a file
    that is not a profile, and its content must not reach a terminal or a CI log."""
    fix = "extends names a shipped profile or a YAML file of name, description and gates"
    try:
        data, lines = load_with_lines(read_text(path))
    except OSError as exc:
        raise QualifySpecError(f"{path}: cannot read the gate profile ({exc.strerror}); check the path") from None
    except YamlLimitError as exc:
        raise QualifySpecError(f"{path}: not a gate profile ({exc.problem}); {fix}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise QualifySpecError(f"{where}: not a gate profile (YAML syntax error there); {fix}") from None
    if not isinstance(data, dict):
        raise QualifySpecError(f"{path}: not a gate profile (not a YAML mapping); {fix}")
    src = _Source(path, data, lines, echo=False)
    allowed = ("name", "description", "gates")
    unknown = [k for k in data if k not in allowed]
    if unknown:
        close = difflib.get_close_matches(str(unknown[0]), allowed, n=1, cutoff=0.6)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise QualifySpecError(f"{path}:{line_of(lines, (unknown[0],))}: not a gate profile: an unknown top-level "
                               f"key{hint}; a profile has only name, description and gates")
    return src


def _unquoted(layer: _Source, key: Path_) -> str:
    """``file:line: key`` with only the leading part of ``key`` that edgeopt's own vocabulary names (the gate
    kinds and their fields): what a profile file holds beyond it is never quoted."""
    known: list[str | int] = []
    for part in key:
        if part in GATE_KINDS or part == "gates" or (known and str(part) in _gate_fields(str(known[-1]))):
            known.append(part)
        else:
            break
    line = line_of(layer.lines, key)
    name = ".".join(str(k) for k in known) or "(top level)"
    return f"{layer.path}:{line}: {name}" if line is not None else f"{layer.path}: {name}"


def _gate_fields(kind: str) -> Mapping[str, Any]:
    info = Gates.model_fields.get(kind)
    model = getattr(getattr(info, "annotation", None), "__args__", (None,))[0]
    return model.model_fields if isinstance(model, type) and issubclass(model, BaseModel) else {}


def _describe(p: SchemaProblem, fields: Mapping[str, Any]) -> str:
    if p.kind == "extra_forbidden":
        return f"unknown key{p.did_you_mean(fields)}; allowed here: {', '.join(fields)} ({_HINT})"
    if p.kind == "missing":
        return f"required key is missing; add it ({_HINT})"
    return f"{p.msg.removeprefix('Value error, ')}{p.got}; fix that value"


def _fields_at(model: type[BaseModel], loc: tuple[Any, ...]) -> Mapping[str, Any]:
    """Field names of the (nested) model that holds ``loc``'s last key, for did-you-mean hints."""
    fields: Mapping[str, Any] = model.model_fields
    for key in loc[:-1]:
        info = fields.get(str(key))
        annotation = getattr(info, "annotation", None)
        for candidate in (annotation, *getattr(annotation, "__args__", ())):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                fields = candidate.model_fields
                break
        else:
            if not isinstance(key, int):
                return fields
    return fields


def _merge_gates(spec: _Source, profiles: list[_Source]) -> tuple[dict[str, Any], dict[str, dict[str, _Source]]]:
    """Gates of the profiles then of the spec, key by key; ``null`` removes a gate. Also where each key came from."""
    merged: dict[str, Any] = {}
    origin: dict[str, dict[str, _Source]] = {}
    for layer in [*profiles, spec]:
        gates = layer.data.get("gates")
        if gates is None:
            continue
        if not isinstance(gates, dict):
            raise QualifySpecError(f"{layer.where(('gates',))}: gates is a mapping of gate name -> settings "
                                   f"({', '.join(GATE_KINDS)})")
        for kind, value in gates.items():
            if kind not in GATE_KINDS:
                close = difflib.get_close_matches(str(kind), GATE_KINDS, n=1, cutoff=0.6)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                at = layer.where(("gates", kind)) if layer.echo else _unquoted(layer, ("gates", kind))
                raise QualifySpecError(f"{at}: unknown gate{hint}; gates: {', '.join(GATE_KINDS)} ({_HINT})")
            if value is None:
                merged.pop(kind, None)
                origin.pop(kind, None)
                continue
            if not isinstance(value, dict):
                raise QualifySpecError(f"{layer.where(('gates', kind))}: a gate's settings are a mapping, e.g. "
                                       "latency: {percentile: p99, max_ms: 50}")
            base = merged.get(kind, {})
            merged[kind] = {**base, **value}
            where = dict(origin.get(kind, {}))
            where.update({str(k): layer for k in value})
            where[""] = layer  # the last layer that touched this gate: blamed for missing keys
            origin[kind] = where
    return merged, origin


def _validate_gates(merged: dict[str, Any], origin: dict[str, dict[str, _Source]]) -> Gates:
    built: dict[str, Any] = {}
    for kind, value in merged.items():
        model = Gates.model_fields[kind].annotation.__args__[0]  # type: ignore[union-attr]
        try:
            built[kind] = model.model_validate(value)
        except ValidationError as exc:
            p = SchemaProblem.of(exc, unknown_first=True)
            key = str(p.loc[0]) if p.loc else ""
            layer = origin[kind].get(key) or origin[kind][""]
            if not layer.echo:  # a profile: name the file, line and gate, never its unknown key or its value
                p = dataclasses.replace(p, got="")
                raise QualifySpecError(f"{_unquoted(layer, ('gates', kind, *p.loc))}: "
                                       f"{_describe(p, model.model_fields)}") from None
            raise QualifySpecError(f"{layer.where(('gates', kind, *p.loc))}: {_describe(p, model.model_fields)}") \
                from None
    return Gates(**built)


def load_spec(path: str | Path) -> LoadedSpec:
    """Read, merge and validate the spec at ``path``.

    Raises:
        QualifySpecError: unreadable or invalid spec or profile (file:line: key: problem; fix), unknown zoo model,
            missing data files, or gates that contradict the rest of the spec.
    """
    spec_path = Path(path)
    if not spec_path.is_file():
        raise QualifySpecError(f"spec file {spec_path} not found: pass the path of a qualification YAML "
                               "(examples/qualify-local.yaml)")
    src = _read(spec_path, "qualification spec")
    extends = src.data.get("extends") or []
    refs = [extends] if isinstance(extends, str) else extends
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        raise QualifySpecError(f"{src.where(('extends',))}: extends is a profile name or a list of them "
                               f"({', '.join(profile_names())})")
    profiles = [_read_profile(_profile_path(ref, src, i)) for i, ref in enumerate(refs)]
    merged, origin = _merge_gates(src, profiles)
    gates = _validate_gates(merged, origin)
    data = {k: v for k, v in src.data.items() if k != "gates"}
    data["gates"] = gates
    try:
        spec = QualifySpec.model_validate(data)
    except ValidationError as exc:
        p = SchemaProblem.of(exc, unknown_first=True)
        raise QualifySpecError(f"{src.where(p.loc)}: {_describe(p, _fields_at(QualifySpec, p.loc))}") from None
    loaded = LoadedSpec(spec=spec, path=spec_path, sha256=hashlib.sha256(spec_path.read_bytes()).hexdigest(),
                        profiles=[str(p.path) for p in profiles], lines=src.lines)
    _check(loaded)
    return loaded


def _check(loaded: LoadedSpec) -> None:
    """Cross-field checks the schema cannot express, and files that must exist."""
    spec = loaded.spec
    if not spec.gates.active():
        raise loaded.error(("gates",), f"no gates: add at least one ({', '.join(GATE_KINDS)}) or extend a profile "
                                       f"({', '.join(profile_names())})")
    if spec.recipe and spec.optimized:
        raise loaded.error(("optimized",), "give 'recipe' (optimize first) or 'optimized' (already done), not both")
    if spec.gates.retention and not (spec.recipe or spec.optimized):
        raise loaded.error(("gates", "retention"), "retention compares an optimized model with the reference: "
                                                   "add 'recipe' or 'optimized'")
    if spec.gates.deadline_miss and spec.measure.streams != 1:
        raise loaded.error(("measure", "streams"), "the deadline_miss gate paces one stream of frames: set "
                                                   "measure.streams to 1")
    miss = spec.gates.deadline_miss
    if miss and miss.frames is None and frames_required(miss.max_pct) > MAX_ITERATIONS:
        raise loaded.error(("gates", "deadline_miss", "max_pct"), f"{miss.max_pct} % needs "
                           f"{frames_required(miss.max_pct):,} frames, over the {MAX_ITERATIONS:,} a run may ask "
                           f"for; use at least {100 / MAX_ITERATIONS:g} %, or set frames")
    if spec.model.zoo and spec.model.zoo not in zoo_names():
        close = difflib.get_close_matches(spec.model.zoo, zoo_names(), n=1, cutoff=0.5)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise loaded.error(("model", "zoo"), f"unknown zoo model '{spec.model.zoo}'{hint}; zoo: "
                                             f"{', '.join(zoo_names())}")
    files: list[tuple[Path_, str | None]] = [
        (("model", "path"), spec.model.path), (("optimized",), spec.optimized), (("inventory",), spec.inventory),
        (("eval", "data"), spec.eval.data), (("calib",), spec.calib),
    ]
    for key, value in files:
        if value is not None and not loaded.resolve(value).exists():
            raise loaded.error(key, f"{loaded.resolve(value)} not found (relative paths are taken from the spec "
                                    "file's directory); fix the path")
    _check_deployments(loaded)
    problem = kind_problem(spec, loaded.resolve)
    if problem is not None:
        raise loaded.error(*problem)
    if spec.recipe and "/" in spec.recipe and Path(spec.recipe).suffix not in _YAML_SUFFIXES:
        raise loaded.error(("recipe",), f"{spec.recipe!r} is not a recipe: use a built-in recipe name (edgeopt "
                                        "recipes) or a recipe file ending .yaml or .yml")
    if spec.recipe and Path(spec.recipe).suffix in _YAML_SUFFIXES and not loaded.resolve(spec.recipe).is_file():
        raise loaded.error(("recipe",), f"recipe file {loaded.resolve(spec.recipe)} not found; use a built-in "
                                        "recipe name (edgeopt recipes) or a path")
    labels = [t.label() for t in spec.targets]
    for i, label in enumerate(labels):
        if labels.index(label) != i:
            raise loaded.error(("targets", i), f"two targets are labelled '{label}': give one a distinct 'name'")


def _check_deployments(loaded: LoadedSpec) -> None:
    """A deployment given as ``model.path`` or ``optimized`` (any kind of model): its record and every file's hash,
    and no ``recipe`` on a deployment ``model.path``, before any run."""
    spec = loaded.spec
    for key, value in ((("model", "path"), spec.model.path), (("optimized",), spec.optimized)):
        if value is None:
            continue
        try:
            use = open_deployment(loaded.resolve(value))
        except DeploymentError as exc:
            raise loaded.error(key, str(exc)) from None
        if use is not None and key == ("model", "path") and spec.recipe:
            raise loaded.error(("recipe",), f"recipe {spec.recipe!r} with model.path {value}, a deployment (its files "
                               "and settings are what ships): the recipe would qualify another model without them; "
                               "remove recipe, or set model.path to the original model")
