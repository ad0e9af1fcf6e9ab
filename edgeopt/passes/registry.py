"""The registry of passes: name -> lazy ``module:Class`` path, so heavy imports (torch, onnxruntime
quantization) happen only when a pass is used.

Built-in passes are listed in :data:`BUILTIN_PASSES`; third-party packages add theirs through the
``edgeopt.passes`` entry-point group (value ``package.module:PassClass``). A name registered twice is an error;
an unknown name lists the known ones with the closest match.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..registry import plugins
from ..registry.lazy import LazyRegistry, RegistryError
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


class PassRegistryError(RegistryError):
    """A pass name is unknown or registered twice, or a registered path does not load."""


class PassRegistry(LazyRegistry[type[Pass[Any]]]):
    """Pass classes by name, imported on first use: a :class:`~edgeopt.registry.lazy.LazyRegistry` of classes
    whose :meth:`get` also checks that the pass can run here."""

    error = PassRegistryError

    def __init__(self, paths: Mapping[str, str] | None = None) -> None:
        """Args: paths: name -> ``module:Class``; default: the built-in passes."""
        super().__init__("pass", type, BUILTIN_PASSES if paths is None else paths)

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(super().names())

    def path(self, name: str) -> str:
        """The ``module:Class`` path of ``name``."""
        self._check_known(name)
        return self._paths[name]

    def get_class(self, name: str) -> type[Pass[Any]]:
        """Import and return the pass class ``name`` (not checking availability).

        Raises:
            PassRegistryError: unknown name (with "did you mean"), or the path does not name a Pass subclass.
        """
        return super().get(name)

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

    def _check(self, name: str, path: str, obj: Any) -> None:
        if not (isinstance(obj, type) and issubclass(obj, Pass)):
            raise PassRegistryError(f"pass '{name}' ({path}) is not a subclass of edgeopt Pass")


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
