"""An LLM deployment (a sweep's ``recommended/``) run as measured: its folder, runtime, options, threads and batch,
each one given checked against it (the CLI's ``bench``, :func:`edgeopt.benchmark` and qualify alike)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...deploy.use import OVERRIDE_FLAG, DeploymentUse, deployed_values


def deployed_run(use: DeploymentUse, runtime: str | None, options: dict[str, Any], threads: Sequence[int],
                 batches: Sequence[int], override: bool, override_hint: str = OVERRIDE_FLAG,
                 names: Mapping[str, str] | None = None,
                 ) -> tuple[Path, str, dict[str, Any], tuple[int, ...], tuple[int, ...]]:
    """The deployment's folder, runtime, options, threads and batch, each given one (a runtime, options, threads
    or batch values) checked against it; ``names``: how a conflict names a setting (default: its flag; qualify:
    its spec key).

    Raises:
        DeploymentConflictError: a given setting that contradicts the deployment, without ``override`` (exit 2).
    """
    given: dict[str, Any] = {}
    if runtime:
        given["runtime"] = runtime
    if options:
        given["runtime_options"] = options
    for key, values in (("threads", threads), ("batch", batches)):
        if values:
            given[key] = values[0] if len(values) == 1 else tuple(values)
    got = deployed_values(use, given, override=override, names=names, override_hint=override_hint)
    as_tuple = {k: got[k] if isinstance(got[k], tuple) else (got[k],) for k in ("threads", "batch")}
    return use.folder, got["runtime"], dict(got["runtime_options"]), as_tuple["threads"], as_tuple["batch"]
