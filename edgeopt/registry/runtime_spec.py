"""What the host knows about one agent runtime, in one object: the formats it loads, what to install for it on
which board, its execution providers per accelerator, whether it is installed here, and whether (and how) the
host can run it to prove a converted model.

The agent's runtime class (``edgeopt_agent.runtimes``, importable here without the runtime's library) is the one
declaration of what the agent side knows: the formats it loads, the packages that provide it, its option schema
and whether it profiles per layer. A descriptor reads those from the class of the same name and adds the
host-only facts; a contract test (``tests/contract/test_registry_agreement.py``) checks both sides register the
same names.
"""

from __future__ import annotations

import importlib
import importlib.util
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from edgeopt_agent import runtimes as agent_runtimes
from edgeopt_agent.runtimes import options as agent_options

from ..enums import AcceleratorKind, Arch
from ..errors import InputError
from .lazy import RegistryError
from .runtime_sweep import CliFlag, Int8Backend, LevelSpec, LowPrecisionDefault

if TYPE_CHECKING:
    import numpy as np


class Target(Protocol):
    """What a descriptor reads of a device target (``edgeopt.targets.Target`` has it): the registry sits below
    targets (a target names runtimes), so it names only the facts it needs."""

    @property
    def accelerator_kind(self) -> AcceleratorKind: ...

    @property
    def arch(self) -> Arch: ...


class InstallHint(BaseModel):
    """What to install on a kind of board; the first hint whose accelerator and arch match the target wins."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    accelerator: AcceleratorKind | None = Field(default=None, description="Accelerator kind it applies to; None: any.")
    arch: Arch | None = Field(default=None, description="CPU architecture it applies to; None: any.")
    text: str = Field(min_length=3, description="The instruction, e.g. 'pip install onnxruntime'.")


class ProviderRule(BaseModel):
    """Execution providers (or devices) a runtime prefers, before its fallback, on one kind of accelerator."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    accelerator: AcceleratorKind = Field(description="Accelerator kind of the target.")
    providers: tuple[str, ...] = Field(min_length=1, description="Providers in order of preference.")


class ExtraPackage(BaseModel):
    """A package the runtime needs on one kind of accelerator (the Edge TPU delegate for TFLite on Coral)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    accelerator: AcceleratorKind = Field(description="Accelerator kind that needs it.")
    package: str = Field(description="Import name, as the agent's probe reports it.")
    purpose: str = Field(description="What it is for, shown in the problem line.")


class SetupRule(BaseModel):
    """How ``edgeopt devices setup`` gets the runtime onto one kind of board; the first matching rule wins.

    A rule gives pip requirements (installed into the device's venv) or, for a runtime only a vendor ships
    (JetPack's TensorRT, Coral's libedgetpu), the exact command a person runs there; setup never attempts that.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    accelerator: AcceleratorKind | None = Field(default=None, description="Target accelerator kind; None: any.")
    arch: Arch | None = Field(default=None, description="The device's CPU architecture (uname -m); None: any.")
    min_python: tuple[int, int] | None = Field(default=None, description="The device's Python at least; None: any.")
    pip: tuple[str, ...] = Field(default=(), description="Pip requirements to install into the venv.")
    vendor: str | None = Field(default=None, description="Vendor-only: the command to run by hand (then no pip).")
    compiles: bool = Field(default=False, description="The pip requirements exist as source only (an sdist): pip "
                           "compiles them on the device; setup builds a wheel once per platform and CPU, keeps it on "
                           "the host and pushes it to every board of that platform.")
    build_env: dict[str, str] = Field(default_factory=dict, description="Environment of that build on the device, "
                                      "e.g. CMAKE_ARGS (part of the built wheel's cache key).")

    def matches(self, accelerator: AcceleratorKind | None, arch: str, python: tuple[int, int]) -> bool:
        """Whether it applies to a board with this accelerator kind, architecture and Python."""
        return ((self.accelerator is None or self.accelerator == accelerator)
                and (self.arch is None or self.arch.value == arch)
                and (self.min_python is None or python >= self.min_python))


def module_importable(name: str) -> bool:
    """Whether ``name`` can be imported by this Python (nothing is imported)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


class RuntimeDescriptor(BaseModel):
    """One agent runtime, seen from the host. Register an instance (``edgeopt.runtimes`` entry point)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_]*$", description="Runtime name, as the agent registers it.")
    display_name: str = Field(min_length=2, description="Name in messages, e.g. 'TensorRT'.")
    auto_select: bool = Field(default=True, description="May be picked when no --runtime is given (null: no).")
    runs_model: bool = Field(default=True, description="False for a runtime that runs no model (null: the harness's "
                                                       "own overhead): FLOP-derived metrics do not apply.")
    delivers: str | None = Field(
        default=None, description="Format optimize delivers for a target that runs it (its native one); None: ONNX."
    )
    module_sets: tuple[tuple[str, ...], ...] = Field(
        default=(), description="Installed here when every module of one set imports; empty: always installed."
    )
    platforms: tuple[str, ...] = Field(default=(), description="platform.system() values it runs on; empty: any.")
    install: str = Field(default="built into the agent", description="What to install when no hint matches.")
    install_hints: tuple[InstallHint, ...] = Field(default=(), description="Board-specific install instructions.")
    extra_packages: tuple[ExtraPackage, ...] = Field(
        default=(), description="Packages some accelerators need (each one of the agent class's packages).")
    setup: tuple[SetupRule, ...] = Field(
        default=(), description="How devices setup installs it per kind of board (first match); none matching: "
                                "vendor-only (its install hint is named), or nothing when it is built into the agent "
                                "(no module_sets).")
    setup_aliases: tuple[str, ...] = Field(
        default=(), description="Other names devices setup --runtimes accepts for it (pip names users know).")
    providers: tuple[ProviderRule, ...] = Field(default=(), description="Preferred providers per accelerator kind.")
    fallback_provider: str | None = Field(default=None, description="Provider always last in the list (the CPU).")
    providers_option: str | None = Field(
        default=None,
        description="Runtime option that takes the providers list (a remote run adds '<option>_fallback: true').",
    )
    int8_symmetric: bool = Field(default=False, description="Wants symmetric S8/S8 QDQ INT8 as a target's first.")
    validation_modules: tuple[str, ...] = Field(
        default=(), description="Host modules that can run it to prove a conversion; the first importable is used."
    )
    wrong_platform_hint: str | None = Field(default=None, description="Said when this OS cannot run it at all.")
    not_installed_hint: str | None = Field(default=None, description="Said when it is not installed here.")

    # --- what the sweep and the CLI need (edgeopt.registry.runtime_sweep): no sweep module or command names a
    # runtime; a plug-in joins the sweep's levels, its INT8 search, bench and profile by declaring these ---
    reference_options: dict[str, Any] = Field(
        default_factory=dict, description="Runtime options that run it at full FP32 precision: the sweep's reference "
                                          "and every level on it use them unless a level says otherwise.")
    low_precision_default: LowPrecisionDefault | None = Field(
        default=None, description="The lower float precision it runs FP32 models in by default (a sweep level).")
    int8_backends: tuple[Int8Backend, ...] = Field(
        default=(), description="How the sweep's INT8 search makes candidates for it (none: it is searched for "
                                "only as the runtime whose INT8 level missed).")
    cli_flags: tuple[CliFlag, ...] = Field(
        default=(), description="Its own bench/profile flags, each setting a runtime option (--ov-device).")

    # --- the model kinds it serves and, for a runtime whose models its own tool exports, how they are made ---
    kinds: tuple[str, ...] = Field(
        default=("tensor",), min_length=1, description="Model kinds it runs (registered kinds, edgeopt.kinds).")
    exporter: str | None = Field(
        default=None, description="'module:attribute' of the exporter that makes its model folders from a source "
                                  "model (a generative runtime's; imported on first use).")
    levels: tuple[LevelSpec, ...] = Field(
        default=(), description="The quantization levels its exporter makes for a sweep, the reference among them.")

    @model_validator(mode="after")
    def _levels_need_an_exporter_and_one_reference(self) -> RuntimeDescriptor:
        if self.levels and self.exporter is None:
            raise ValueError(f"runtime {self.name}: levels need an exporter ('module:attribute')")
        refs = [lv.name for lv in self.levels if lv.reference]
        if self.levels and len(refs) != 1:
            raise ValueError(f"runtime {self.name}: exactly one level must be the reference (found {refs or 'none'})")
        names = [lv.name for lv in self.levels]
        if len(set(names)) != len(names):
            raise ValueError(f"runtime {self.name}: level names repeat ({', '.join(names)})")
        return self

    def load_exporter(self) -> Any:
        """The exporter object its ``exporter`` path names (imported now).

        Raises:
            RegistryError: no exporter declared, or the path does not import.
        """
        if self.exporter is None:
            raise RegistryError(f"runtime {self.name} has no exporter: its models are not made by edgeopt")
        module, _, attr = self.exporter.partition(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise RegistryError(f"runtime {self.name}: exporter {self.exporter!r} does not load ({exc})") from None

    def serves(self, kind: str) -> bool:
        """Whether it runs models of ``kind`` (the null runtime serves every kind it lists)."""
        return kind in self.kinds

    @model_validator(mode="after")
    def _low_precision_option_is_a_reference_option(self) -> RuntimeDescriptor:
        low = self.low_precision_default
        if low is not None and low.option not in self.reference_options:
            raise ValueError(f"runtime {self.name}: low_precision_default.option {low.option!r} is not one of its "
                             f"reference_options ({', '.join(self.reference_options) or 'none'}); add it there "
                             "with its full-precision value")
        return self

    def agent_class(self) -> type[agent_runtimes.Runtime]:
        """The agent's runtime class of the same name (its module is imported, not the runtime's library).

        Raises:
            RegistryError: no agent runtime of that name (a plug-in must register an ``edgeopt_agent.runtimes``
                entry point too), or its module does not import.
        """
        try:
            return agent_runtimes.runtime_class(self.name)
        except (KeyError, ImportError, AttributeError) as exc:
            why = exc.args[0] if exc.args else type(exc).__name__
            raise RegistryError(f"runtime '{self.name}' has no loadable agent class ({why}); register one as an "
                                "edgeopt_agent.runtimes entry point of the same name") from None

    @property
    def formats(self) -> tuple[str, ...]:
        """Formats it loads (file and artifact formats), as its agent class declares them."""
        return tuple(self.agent_class().formats)

    @property
    def loads_any(self) -> bool:
        """Loads every format (the null runtime), as its agent class declares it."""
        return bool(self.agent_class().loads_any)

    @property
    def packages(self) -> tuple[str, ...]:
        """Import names that provide it on a device (the agent class's packages, less the accelerator-specific
        :attr:`extra_packages`), as the agent's probe reports them."""
        extra = {e.package for e in self.extra_packages}
        return tuple(module for module, _ in self.agent_class().packages if module not in extra)

    @property
    def profiles(self) -> bool:
        """Whether its agent class drives a per-layer profiler (``edgeopt profile``)."""
        return getattr(self.agent_class(), "profile_unsupported", None) == ""

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Check runtime options against the agent class's option schema, here, before anything is sent.

        Raises:
            InputError: an unknown option or a bad value (exit 2); one line naming the option and the known ones.
        """
        problem = agent_options.problem(self.name, self.agent_class().option_schema, dict(options))
        if problem:
            raise InputError(f"--runtime-option: {problem}")

    def loads(self, fmt: str) -> bool:
        """Whether its own descriptor says it loads ``fmt`` (a format's ``loaded_by`` may add more: ask
        :func:`edgeopt.registry.runtime_loads`)."""
        return self.loads_any or str(getattr(fmt, "value", fmt)) in self.formats

    def runs_on_this_os(self) -> bool:
        """Whether this operating system can run it at all."""
        return not self.platforms or platform.system() in self.platforms

    def installed_here(self) -> bool:
        """Whether its library is importable by this Python on a supported OS (cheap: nothing is imported)."""
        if not self.runs_on_this_os():
            return False
        return not self.module_sets or any(all(module_importable(m) for m in s) for s in self.module_sets)

    def not_here_reason(self, fmt: str) -> str | None:
        """Why a local run of a ``fmt`` model on it cannot happen here (None when it can)."""
        if not self.runs_on_this_os():
            return self.wrong_platform_hint or f"runtime {self.name} does not run on {platform.system()}"
        if not self.installed_here():
            return self.not_installed_hint or f"runtime {self.name} is not installed here (it loads {fmt})"
        return None

    def install_hint(self, target: Target | None) -> str:
        """What to install on the device for this runtime, for the kind of board ``target`` is."""
        if target is not None:
            for hint in self.install_hints:
                if hint.accelerator in (None, target.accelerator_kind) and hint.arch in (None, target.arch):
                    return hint.text
        return self.install

    def setup_rule(self, target: Target | None, arch: str, python: tuple[int, int]) -> SetupRule | None:
        """The first :class:`SetupRule` that applies to this board, or None."""
        accelerator = target.accelerator_kind if target is not None else None
        return next((rule for rule in self.setup if rule.matches(accelerator, arch, python)), None)

    def setup_plan(self, target: Target | None, arch: str,
                   python: tuple[int, int]) -> tuple[tuple[str, ...], str | None]:
        """``devices setup``'s (pip requirements, vendor command) for a board: the first matching
        :class:`SetupRule`; none matching: the install hint as a vendor command (nothing at all for a runtime
        built into the agent)."""
        accelerator = target.accelerator_kind if target is not None else None
        for rule in self.setup:
            if rule.matches(accelerator, arch, python):
                return (() if rule.vendor else rule.pip), rule.vendor
        return (), (self.install_hint(target) if self.module_sets else None)

    def preferred_providers(self, target: Target, available: Sequence[str] | None = None) -> list[str]:
        """Execution providers for ``target``, most preferred first, ending with the fallback one.

        Args:
            target: the device target (its ``accelerator_kind`` picks the rules).
            available: providers of the build that will run (a local run); None when unknown (remote): the
                full list is returned and the agent drops what its build lacks.
        """
        preferred: list[str] = []
        for rule in self.providers:
            if rule.accelerator is target.accelerator_kind:
                preferred.extend(p for p in rule.providers if p not in preferred)
        if self.fallback_provider is None:
            return preferred
        preferred.append(self.fallback_provider)
        if available is None:
            return preferred
        return [p for p in preferred if p in available] or [self.fallback_provider]

    def available_providers(self) -> list[str] | None:
        """Providers of the build installed here (None when the runtime has no providers)."""
        return None

    def host_validator(self) -> str | None:
        """The module that runs it on this host to prove a conversion (reported as the runtime), or None."""
        return next((m for m in self.validation_modules if module_importable(m)), None)

    def host_infer(self, path: Path, samples: Sequence[dict[str, np.ndarray]], module: str) -> list[list[np.ndarray]]:
        """Outputs of the model at ``path`` on ``samples``, run here with ``module`` (one list per sample).

        Raises:
            NotImplementedError: the runtime has no host-side inference (``validation_modules`` is empty).
        """
        raise NotImplementedError(f"runtime {self.name} has no host-side inference")
