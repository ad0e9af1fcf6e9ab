"""``result.json``: the whole :class:`QualifyResult` (with ``schema_version``), raw samples included."""

from __future__ import annotations

from ..qualify.result import QualifyResult


def render_json(result: QualifyResult) -> str:
    return result.model_dump_json(indent=2) + "\n"
