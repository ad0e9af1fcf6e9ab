"""The registry of passes: name -> lazy ``module:Class`` path, so heavy imports (torch, onnxruntime
quantization) happen only when a pass is used.

Built-in passes are listed in :data:`BUILTIN_PASSES`; third-party packages add theirs through the
``edgeopt.passes`` entry-point group (value ``package.module:PassClass``). A name registered twice is an error;
an unknown name lists the known ones with the closest match.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import InputError
from ..registry import plugins
from .base import Pass, PassUnavailableError

ENTRY_POINT_GROUP = "edgeopt.passes"

BUILTIN_PASSES: dict[str, str] = {
    "cleanup": "edgeopt.passes.cleanup:CleanupPass",
    "fp16": "edgeopt.passes.fp16:Fp16Pass",
    "quantize_int8": "edgeopt.passes.quantize_int8:QuantizeInt8Pass",
    "quantize_int8_dynamic": "edgeopt.passes.quantize_int8_dynamic:QuantizeInt8DynamicPass",
    "quantize_int4": "edgeopt.passes.quantize_int4:QuantizeInt4Pass",
    "prune_magnitude": "edgeopt.passes.prune_magnitude:PruneMagnitudePass",
    # PyTorch-side passes (need edgeopt[torch]).
    "export": "edgeopt.passes.export_torch:ExportPass",
    "prune_structured": "edgeopt.passes.prune_structured:PruneStructuredPass",
    "distill": "edgeopt.passes.distill:DistillPass",
    # Conversion passes (ONNX/PyTorch -> a runtime's format; edgeopt/passes/convert.py adds them per target).
    "to_openvino": "edgeopt.passes.to_openvino:ToOpenVinoPass",
    "to_tflite": "edgeopt.passes.to_tflite:ToTflitePass",
    "to_coreml": "edgeopt.passes.to_coreml:ToCoremlPass",
    "tensorrt_prepare": "edgeopt.passes.tensorrt_prepare:TensorRtPreparePass",
}


class PassRegistryError(InputError):
    """A pass name is unknown or registered twice, or a registered path does not load."""


class PassRegistry:
    """Pass classes by name, imported on first use."""

    def __init__(self, paths: Mapping[str, str] | None = None) -> None:
        """Args: paths: name -> ``module:Class``; default: the built-in passes."""
        self._paths: dict[str, str] = {}
        self._loaded: dict[str, type[Pass[Any]]] = {}
        for name, path in (BUILTIN_PASSES if paths is None else paths).items():
            self.register(name, path)

    def register(self, name: str, path: str, *, origin: str = "built-in") -> None:
        """Add a pass. Raises PassRegistryError when ``name`` is taken (nothing silently shadows a pass)."""
        if name in self._paths:
            raise PassRegistryError(
                f"pass '{name}' is registered twice: {self._paths[name]} and {path} ({origin}); "
                "rename one of them or uninstall the package that provides it"
            )
        if ":" not in path:
            raise PassRegistryError(f"pass '{name}' path {path!r} ({origin}) is not 'package.module:Class'")
        self._paths[name] = path

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._paths)

    def path(self, name: str) -> str:
        """The ``module:Class`` path of ``name``."""
        self._check_known(name)
        return self._paths[name]

    def get_class(self, name: str) -> type[Pass[Any]]:
        """Import and return the pass class ``name`` (not checking availability).

        Raises:
            PassRegistryError: unknown name (with "did you mean"), or the path does not name a Pass subclass.
        """
        self._check_known(name)
        if name not in self._loaded:
            module_name, _, attr = self._paths[name].partition(":")
            try:
                cls = getattr(importlib.import_module(module_name), attr)
            except (ImportError, AttributeError) as exc:
                raise PassRegistryError(
                    f"pass '{name}' ({self._paths[name]}) could not be loaded: {type(exc).__name__}: {exc}; "
                    "reinstall edgeopt or the package that registers it"
                ) from exc
            if not (isinstance(cls, type) and issubclass(cls, Pass)):
                raise PassRegistryError(f"pass '{name}' ({self._paths[name]}) is not a subclass of edgeopt Pass")
            self._loaded[name] = cls
        return self._loaded[name]

    def get(self, name: str) -> type[Pass[Any]]:
        """The pass class ``name``, checked to be runnable here.

        Raises:
            PassRegistryError: unknown name.
            PassUnavailableError: the pass needs an extra that is not installed, or is not implemented yet.
        """
        cls = self.get_class(name)
        reason = cls.availability()
        if reason:
            raise PassUnavailableError(reason)
        return cls

    def create(self, name: str, config: Mapping[str, Any] | None = None) -> Pass[Any]:
        """An instance of pass ``name`` with ``config`` validated (raises pydantic's ValidationError)."""
        cls = self.get(name)
        return cls(cls.parse_config(config))

    def _check_known(self, name: str) -> None:
        if name not in self._paths:
            close = difflib.get_close_matches(name, self._paths, n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise PassRegistryError(f"unknown pass '{name}'{hint}; known passes: {', '.join(self.names())}")

    def __contains__(self, name: object) -> bool:
        return name in self._paths

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


def load_pass_registry(*, entry_points: bool = True) -> PassRegistry:
    """The built-in passes plus those registered by installed packages (group ``edgeopt.passes``).

    Raises:
        PassRegistryError: an entry point reuses a name.
    """
    registry = PassRegistry()
    if entry_points:
        for entry in plugins.entry_points(ENTRY_POINT_GROUP):
            registry.register(entry.name, entry.value, origin=f"entry point in {ENTRY_POINT_GROUP}")
    return registry
