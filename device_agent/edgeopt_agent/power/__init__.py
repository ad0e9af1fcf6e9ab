"""Energy measurement in the agent: power readers (one file per board layout) and the sampler.

``PowerSession.open(request.energy)`` finds a sensor (``auto`` probes, the target's sensor first); the harness
calls ``idle()``, ``start()``, ``stop()`` around the timed phase and puts ``report()`` in ``RawRun.power``.
Readers are registered in ``base._REGISTRY`` as lazy dotted paths; ``probe()`` lists what exists here.
"""

from .base import (
    KIND_ENERGY,
    KIND_POWER,
    PowerReader,
    PowerSettings,
    SensorNotFound,
    find_reader,
    names,
    open_reader,
    parse_settings,
    probe,
)
from .phases import interval_energy
from .sampler import PowerSession, Sampler, clip, summarize

__all__ = [
    "KIND_ENERGY",
    "KIND_POWER",
    "PowerReader",
    "PowerSession",
    "PowerSettings",
    "Sampler",
    "clip",
    "SensorNotFound",
    "find_reader",
    "interval_energy",
    "names",
    "open_reader",
    "parse_settings",
    "probe",
    "summarize",
]
