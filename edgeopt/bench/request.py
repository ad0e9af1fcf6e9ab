"""What :func:`edgeopt.benchmark` hands the entry of a model's kind (``KindDescriptor.bench_api``): the typed
settings the keywords built, where to run, and the kind's own workload, in one argument shape for every kind."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..errors import InputError
from ..runners import ProgressSink, Runner
from ..settings import MeasureSettings, RemoteSpec


@dataclass(frozen=True)
class BenchRequest:
    """One benchmark as asked: ``settings`` and ``remote`` from :func:`edgeopt.benchmark`'s keywords, ``workload``
    its ``workload=`` keyword (an LLM folder's :class:`~edgeopt.bench.llm.workload.LlmWorkload`, a plug-in kind's
    settings model, or a mapping of either's fields; None: the kind's defaults and the keywords)."""

    settings: MeasureSettings
    remote: RemoteSpec
    target: str | None = None
    runner: Runner | None = None
    progress: ProgressSink | None = None
    targets_dirs: Sequence[Path] = ()
    override_deployment: bool = False
    workload: BaseModel | Mapping[str, Any] | None = None

    def refuse_workload(self, model: Path, word: str) -> None:
        """``workload=`` for a kind that takes none (``word``: how the kind names its model).

        Raises:
            InputError: a workload was given.
        """
        if self.workload is not None:
            raise InputError(f"workload= sets the workload of an LLM folder or a plug-in kind's model, and {model} "
                             f"is {word}: drop it, and set threads, batch, ... as keywords")

    def workload_fields(self) -> dict[str, Any]:
        """The workload as a mapping of its fields (a model's set fields; a mapping as given; empty for None)."""
        if isinstance(self.workload, BaseModel):
            return self.workload.model_dump(exclude_unset=True)
        return dict(self.workload or {})
