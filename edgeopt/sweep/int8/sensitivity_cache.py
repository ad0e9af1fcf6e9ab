"""Per-node INT8 sensitivity and per-layer latency gains, cached so another threshold re-uses them.

Re-running a sweep with another ``--min-retention`` recomputed the per-node sensitivity (205 s on a detector,
issue 14) although nothing it depends on had changed. What each depends on is its key:

- sensitivity: the model (sha256), the runtime (and its version) it was scored on, the quantizer config, the
  eval data digest, the metric and the output selection. Not the threshold: narrowing to a threshold re-reads it.
- latency gains (float vs INT8 time per node): the model, the runtime and version, the quantizer config, the
  device (target or host name) and the thread count. Not the eval data or the metric.

Entries are JSON files in the sweep's cache directory (:class:`~edgeopt.sweep.cache.LevelCache`, written atomically).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...profile.mapping import MAPPING_VERSION
from ..cache import LevelCache, cache_key


class SensitivityKey(BaseModel):
    """What a per-node sensitivity ranking depends on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model_sha256: str = Field(description="sha256 of the float model the quantized nodes come from.")
    runtime: str = Field(description="Runtime the nodes were scored on (onnxruntime for the host proxy).")
    runtime_version: str = Field(default="", description="Its version; kernels change rounding.")
    quantizer: dict[str, Any] = Field(description="The quantizer config (calibration, types, per-channel...).")
    eval_digest: str = Field(description="Digest of the eval samples used.")
    metric: str = Field(description="Metric name the retention uses.")
    output: str = Field(default="", description="Output selection the metric reads.")
    method: str = Field(default="leave_one_out", description="leave_one_out or only_this_node.")

    def digest(self) -> str:
        return "sens-" + cache_key(**self.model_dump(mode="json"))


class NodeScore(BaseModel):
    """One node's effect on accuracy: retention and relative output error with the method's edit applied."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    retention: float
    rel_err: float


class SensitivityEntry(BaseModel):
    """A cached sensitivity ranking."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: SensitivityKey
    baseline_retention: float = Field(description="Retention of the fully quantized model (leave_one_out) or 1.0.")
    baseline_rel_err: float = Field(default=0.0, description="Relative output error of that model.")
    nodes: dict[str, NodeScore]
    seconds: float = Field(ge=0, description="Time it took to compute.")


class LatencyKey(BaseModel):
    """What per-node latency gains (float minus INT8 time) depend on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model_sha256: str
    runtime: str
    runtime_version: str = ""
    quantizer: dict[str, Any]
    device: str = Field(description="Target or device the layers were profiled on.")
    threads: int = Field(ge=0, description="Runtime threads (0: the runtime's default).")
    mapping: int = Field(default=MAPPING_VERSION, description="edgeopt.profile.mapping's version: gains from "
                         "an older layer-to-node mapping are not reused.")

    def digest(self) -> str:
        return "gain-" + cache_key(**self.model_dump(mode="json"))


class LatencyEntry(BaseModel):
    """Cached per-node latency gains, ms per inference."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: LatencyKey
    gain_ms: dict[str, float]
    seconds: float = Field(ge=0)


class SensitivityCache:
    """Sensitivity and latency-gain entries under ``directory``; ``enabled=False`` reads nothing (``--no-cache``)."""

    def __init__(self, directory: Path, *, enabled: bool = True) -> None:
        self._store = LevelCache(directory, enabled=enabled)
        self.gains_written = 0  # latency gains measured (and stored) through this cache: profiles taken

    def sensitivity(self, key: SensitivityKey) -> SensitivityEntry | None:
        """The cached entry for ``key``; None when absent, disabled, or written by an incompatible version."""
        raw = self._store.get(key.digest())
        try:
            entry = SensitivityEntry.model_validate(raw) if raw is not None else None
        except ValidationError:
            return None
        return entry if entry is not None and entry.key == key else None

    def put_sensitivity(self, entry: SensitivityEntry) -> None:
        self._store.put(entry.key.digest(), entry.model_dump(mode="json"))

    def sensitivity_or_compute(
        self, key: SensitivityKey, compute: Callable[[], tuple[float, float, dict[str, NodeScore]]]
    ) -> tuple[SensitivityEntry, bool]:
        """The cached entry, or ``compute()`` -> ``(baseline retention, baseline rel err, nodes)`` stored now.

        Returns:
            The entry and whether it came from the cache.
        """
        hit = self.sensitivity(key)
        if hit is not None:
            return hit, True
        t0 = time.perf_counter()
        ret, rel, nodes = compute()
        entry = SensitivityEntry(key=key, baseline_retention=ret, baseline_rel_err=rel, nodes=nodes,
                                 seconds=round(time.perf_counter() - t0, 3))
        self.put_sensitivity(entry)
        return entry, False

    def gains(self, key: LatencyKey) -> LatencyEntry | None:
        """The cached latency gains for ``key``, or None."""
        raw = self._store.get(key.digest())
        try:
            entry = LatencyEntry.model_validate(raw) if raw is not None else None
        except ValidationError:
            return None
        return entry if entry is not None and entry.key == key else None

    def put_gains(self, entry: LatencyEntry) -> None:
        self.gains_written += 1
        self._store.put(entry.key.digest(), entry.model_dump(mode="json"))
