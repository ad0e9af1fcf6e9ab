"""The pass interface: what a pass takes (an :class:`Artifact` and a :class:`PassContext`), what it returns (a new
:class:`Artifact`), and how its options are typed.

A pass never edits its input: :meth:`Pass.run` writes a new file at ``ctx.output_path`` and :meth:`Pass.apply`
wraps it in a new, hashed artifact that records its parent, the pass, its full config and the time it took.
A pass may change format (``export`` takes a PyTorch artifact and returns an ONNX one): its class declares the
formats it accepts and the one it produces.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..enums import Precision
from ..errors import InputError
from ..fsutil import sha256_file
from ..names import ModelFormat, RuntimeName
from ..targets.schema import Target

# What kind of file an artifact is: the one format enum (``edgeopt.enums.ModelFormat``), under the name passes use.
ArtifactFormat = ModelFormat


class _FormatRuntimes(Mapping[ModelFormat, frozenset[RuntimeName]]):
    """Read-only view kept for callers of the old table: format -> runtimes that load it, from the registry."""

    def __getitem__(self, fmt: ModelFormat) -> frozenset[RuntimeName]:
        from ..registry import format_names, loaders

        if str(getattr(fmt, "value", fmt)) not in format_names():
            raise KeyError(fmt)
        return frozenset(RuntimeName(r.name) for r in loaders(fmt))

    def __iter__(self) -> Iterator[ModelFormat]:
        from ..registry import format_names

        return iter([ModelFormat(name) for name in format_names()])

    def __len__(self) -> int:
        from ..registry import format_names

        return len(format_names())


# Deprecated view (use ``edgeopt.registry.loaders``): which runtimes can consume each format.
FORMAT_RUNTIMES: Mapping[ModelFormat, frozenset[RuntimeName]] = _FormatRuntimes()


class PassError(InputError):
    """A pass could not process this model (an unsupported op, a failed conversion, an invalid result)."""


class PassUnavailableError(InputError):
    """A registered pass cannot run here: its extra is not installed or it is not implemented yet."""


class Artifact(BaseModel):
    """One model file produced (or taken as input) by the optimize pipeline. Passes exchange only these."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Short name: 'input', or '<step>-<pass>' for a pass output, e.g. '2-quantize_int8'.")
    path: str = Field(description="File path (for a PyTorch factory: the 'package.module:factory' spec).")
    format: ArtifactFormat = Field(description="File format.")
    precision: Precision = Field(description="Precision the model computes in (weights for weight-only INT4).")
    sha256: str = Field(description="Hex SHA-256 of the main file (of the spec text for a factory).")
    size_bytes: int = Field(ge=0, description="Size on disk in bytes, external data files included.")
    parent_sha256: str | None = Field(default=None, description="sha256 of the artifact this one was made from.")
    parent_name: str | None = Field(default=None, description="name of the artifact this one was made from.")
    pass_name: str | None = Field(default=None, description="The pass that made it (None for the input).")
    pass_config: dict[str, Any] = Field(default_factory=dict, description="The pass's full, resolved config.")
    seconds: float = Field(default=0.0, ge=0, description="Wall time the pass took, in seconds.")
    report: dict[str, Any] = Field(default_factory=dict, description="Pass-specific facts (sparsity, counts).")
    warnings: list[str] = Field(default_factory=list, description="What the pass warned about.")

    @classmethod
    def from_file(
        cls,
        path: Path,
        *,
        name: str,
        format: ArtifactFormat,
        precision: Precision,
        parent: Artifact | None = None,
        pass_name: str | None = None,
        pass_config: Mapping[str, Any] | None = None,
        seconds: float = 0.0,
        report: Mapping[str, Any] | None = None,
        warnings: Sequence[str] = (),
    ) -> Artifact:
        """Hash and measure ``path`` (an ONNX file's size includes its external data files)."""
        return cls(
            name=name,
            path=str(path),
            format=format,
            precision=precision,
            sha256=sha256_file(path),
            size_bytes=file_size_bytes(path, format),
            parent_sha256=parent.sha256 if parent else None,
            parent_name=parent.name if parent else None,
            pass_name=pass_name,
            pass_config=dict(pass_config or {}),
            seconds=round(seconds, 4),
            report=dict(report or {}),
            warnings=list(warnings),
        )


def file_size_bytes(path: Path, format: ArtifactFormat) -> int:
    """Bytes on disk of every file of the model (for ONNX the model file plus its external data files)."""
    from ..registry import get_format

    return get_format(get_format(format).file_format).size_bytes(path)


class Reporter(Protocol):
    """Where passes send progress and warnings (the CLI prints them on stderr; the API may collect them)."""

    def info(self, message: str) -> None: ...

    def warn(self, message: str) -> None: ...

    def progress(self, task: str, done: int, total: int | None) -> None: ...


class NullReporter:
    """A :class:`Reporter` that drops everything (the default of the Python API)."""

    def info(self, message: str) -> None:
        return None

    def warn(self, message: str) -> None:
        return None

    def progress(self, task: str, done: int, total: int | None) -> None:
        return None


class CalibrationProvider(Protocol):
    """Gives calibration samples (one feed dict per sample, keyed by input name) for a model file."""

    @property
    def is_random(self) -> bool:
        """True when the samples are random inputs, not the user's data."""
        ...

    def samples(self, model_path: Path, limit: int | None = None) -> list[dict[str, np.ndarray]]:
        """Samples matching the inputs of ``model_path``; at most ``limit`` of them.

        Raises:
            InputError: the data does not fit the model's inputs.
        """
        ...


@dataclass(frozen=True)
class PassContext:
    """Everything a pass may use besides its input and config; passed explicitly (no globals).

    Attributes:
        work_dir: a private temporary directory for scratch files.
        output_path: where the pass must write its output file (the pipeline moves it into the output dir).
        target: the device target, already resolved.
        calibration: calibration samples, or None when no pass of the recipe needs them.
        reporter: progress and warning sink.
        input_shapes: concrete shapes of inputs with dynamic dims, by input name.
        seed: seed for anything random a pass does.
    """

    work_dir: Path
    output_path: Path
    target: Target
    calibration: CalibrationProvider | None = None
    reporter: Reporter = field(default_factory=NullReporter)
    input_shapes: Mapping[str, Sequence[int]] = field(default_factory=dict)
    seed: int = 0


@dataclass
class PassOutput:
    """What :meth:`Pass.run` returns: the file it wrote and what it wants recorded about it."""

    path: Path
    precision: Precision
    format: ArtifactFormat = ArtifactFormat.ONNX
    report: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


class PassConfig(BaseModel):
    """Base of every pass config: frozen, strict (an unknown option is an error), every field described."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=False)


C = TypeVar("C", bound=PassConfig)


class Pass(ABC, Generic[C]):
    """A model transformation with a typed config. Subclasses set the class attributes and implement :meth:`run`.

    Class attributes:
        name: the registry name (``quantize_int8``).
        summary: one line for ``edgeopt recipes`` and the docs.
        config_class: the pydantic config model.
        input_formats: formats the pass accepts.
        output_format: format it produces.
        needs_calibration: whether it reads ``ctx.calibration``.
    """

    name: ClassVar[str]
    summary: ClassVar[str] = ""
    config_class: ClassVar[type[PassConfig]]
    input_formats: ClassVar[frozenset[ArtifactFormat]] = frozenset({ArtifactFormat.ONNX})
    output_format: ClassVar[ArtifactFormat] = ArtifactFormat.ONNX
    needs_calibration: ClassVar[bool] = False

    def __init__(self, config: C) -> None:
        """Args: config: the validated config (see :meth:`parse_config`)."""
        self.config: C = config

    @classmethod
    def availability(cls) -> str | None:
        """None when the pass can run here, else a one-line reason with the fix (a missing extra)."""
        return None

    def unavailable(self) -> str | None:
        """:meth:`availability` for this configured pass: an option may need more (``int8: nncf`` needs NNCF)."""
        return type(self).availability()

    @classmethod
    def parse_config(cls, raw: Mapping[str, Any] | None) -> PassConfig:
        """Validate raw options (from YAML or Python) into the config model.

        Raises:
            pydantic.ValidationError: an unknown option or a bad value (the recipe loader adds file and line).
        """
        return cls.config_class.model_validate(dict(raw or {}))

    def for_target(self, target: Target) -> Pass[C]:
        """This pass with its automatic options (``None`` = "chosen from the target") filled in for ``target``."""
        return self

    def output_precision(self, input_precision: Precision) -> Precision:
        """Precision of the output for an input of ``input_precision`` (default: unchanged)."""
        return input_precision

    def target_problem(self, target: Target, input_precision: Precision) -> str | None:
        """Why this pass's output cannot run on ``target`` (None when it can). Checked before any work."""
        out = self.output_precision(input_precision)
        if out != input_precision and out not in target.precisions:
            have = ", ".join(p.value for p in target.precisions)
            return (
                f"pass '{self.name}' produces {out.value} but target '{target.name}' runs only {have}; "
                "pick a recipe for one of those precisions (edgeopt recipes)"
            )
        return None

    def apply(self, source: Artifact, ctx: PassContext, *, name: str) -> Artifact:
        """Run the pass on ``source`` and return the new artifact (timed, hashed, with its parent and config).

        Raises:
            PassError: the input format is wrong or the pass failed on this model.
            PassUnavailableError: the pass cannot run here.
        """
        reason = self.availability()
        if reason:
            raise PassUnavailableError(reason)
        if source.format not in self.input_formats:
            wants = ", ".join(sorted(f.value for f in self.input_formats))
            raise PassError(
                f"pass '{self.name}' takes {wants} models but got {source.format.value} ({source.path}); "
                "put a conversion pass (e.g. export) before it in the recipe"
            )
        started = time.perf_counter()
        out = self.run(source, ctx)
        seconds = time.perf_counter() - started
        sha256, size_bytes = self.output_digest(out)
        return Artifact(
            name=name,
            path=str(out.path),
            format=out.format,
            precision=out.precision,
            sha256=sha256,
            size_bytes=size_bytes,
            parent_sha256=source.sha256,
            parent_name=source.name,
            pass_name=self.name,
            pass_config=self.config.model_dump(mode="json"),
            seconds=round(seconds, 4),
            report=dict(out.report),
            warnings=list(out.warnings),
        )

    def output_digest(self, out: PassOutput) -> tuple[str, int]:
        """(hex SHA-256, size in bytes) of the pass's output: its main file; an ONNX size counts external data."""
        return sha256_file(out.path), file_size_bytes(out.path, out.format)

    @abstractmethod
    def run(self, source: Artifact, ctx: PassContext) -> PassOutput:
        """Transform ``source`` into a new file at ``ctx.output_path``; never modify ``source``.

        Raises:
            PassError: the model cannot be processed (say which node or op, and the fix).
        """
