"""Device targets: one YAML file per device, validated into :class:`Target` and found through a registry."""

from __future__ import annotations

from .cpuinfo import CpuFacts, cpu_facts
from .detect import detect_local
from .registry import TargetRegistry, load_registry
from .schema import Sourced, Target

__all__ = ["CpuFacts", "Sourced", "Target", "TargetRegistry", "cpu_facts", "detect_local", "load_registry"]
