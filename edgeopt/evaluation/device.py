"""Evaluation outputs measured where the model runs: the agent's ``evaluate`` command through a runner."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from edgeopt_agent.protocol import RawRun, Request

from ..errors import RunnerError
from ..runners import Runner, raise_for_error


def device_outputs(model: Path, eval_npz: Path, *, runtime: str, runner: Runner,
                   runtime_options: dict[str, Any] | None = None, threads: int = 0,
                   max_duration_s: float = 600.0) -> tuple[list[np.ndarray], list[str], RawRun]:
    """Run every sample of ``eval_npz`` through ``model`` on ``runtime`` via ``runner``.

    Returns:
        The outputs (samples on axis 0, model output order), their names, and the agent's raw result.

    Raises:
        RunnerError: the agent failed or wrote no outputs. InputError: bad eval data.
    """
    with tempfile.TemporaryDirectory(prefix="edgeopt-eval-") as tmp:
        out_path = Path(tmp) / "eval_outputs.npz"
        request = Request(model_path=str(model.resolve()), runtime=runtime, runtime_options=dict(runtime_options or {}),
                          threads=threads, max_duration_s=max_duration_s, progress_interval_s=0,
                          eval_npz=str(eval_npz.resolve()), eval_output=str(out_path), energy={"enabled": False})
        raw = raise_for_error(runner.evaluate(request, model), runner.name)
        if not out_path.is_file():
            raise RunnerError(f"the agent on {runner.name} wrote no eval outputs; update the agent on the device")
        with np.load(out_path, allow_pickle=False) as data:
            keys = sorted(data.files, key=lambda k: int(k[3:]))
            outputs = [np.asarray(data[k]) for k in keys]
    names = [str(o.get("name", f"out{i}")) for i, o in enumerate(raw.outputs)]
    return outputs, names, raw
