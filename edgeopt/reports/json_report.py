"""``result.json``: the whole :class:`QualifyResult` (with ``schema_version``), raw samples included."""

from __future__ import annotations

from ..qualify.result import QualifyResult
from ..untrusted import for_json


def render_json(result: QualifyResult) -> str:
    return for_json(result.model_dump_json(indent=2)) + "\n"  # the same data, nothing a terminal acts on
