"""The ``null`` runtime: every inference returns at once, so a run measures the harness's own overhead."""

from __future__ import annotations

from typing import Any, Callable, Dict, List

from ..protocol import TensorInfo
from .base import Runtime


def _noop() -> None:
    return None


class NullRuntime(Runtime):
    name = "null"
    loads_any = True
    profile_unsupported = "the null runtime runs no layers (it measures the harness alone)"

    def version(self) -> str:
        from .. import __version__

        return __version__

    def load(self, model_path: str, options: Dict[str, Any], threads: int) -> None:
        return None

    def inputs(self) -> List[TensorInfo]:
        return []

    def outputs(self) -> List[TensorInfo]:
        return []

    def bind(self, feeds: Dict[str, Any]) -> Callable[[], Any]:
        return _noop
