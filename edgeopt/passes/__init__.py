"""Optimization passes: each takes an :class:`Artifact` and returns a new one. Found by name through
:class:`PassRegistry`; pass modules are imported only when used."""

from .base import (
    Artifact,
    ArtifactFormat,
    CalibrationProvider,
    NullReporter,
    Pass,
    PassConfig,
    PassContext,
    PassError,
    PassOutput,
    PassUnavailableError,
    Reporter,
)
from .registry import BUILTIN_PASSES, ENTRY_POINT_GROUP, PassRegistry, PassRegistryError, load_pass_registry

__all__ = [
    "BUILTIN_PASSES",
    "ENTRY_POINT_GROUP",
    "Artifact",
    "ArtifactFormat",
    "CalibrationProvider",
    "NullReporter",
    "Pass",
    "PassConfig",
    "PassContext",
    "PassError",
    "PassOutput",
    "PassRegistry",
    "PassRegistryError",
    "PassUnavailableError",
    "Reporter",
    "load_pass_registry",
]
