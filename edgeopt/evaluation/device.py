"""Evaluation outputs measured where the model runs: the agent's ``evaluate`` command through a runner."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from edgeopt_agent.protocol import RawRun, Request

from ..errors import RunnerError
from ..inbound import InboundError, load_arrays
from ..npz_headers import NpzHeaderError, members, samples_and_bytes
from ..runners import Runner, raise_for_error
from ..runners.limits import eval_output_bytes
from ..untrusted import clean_text


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
        keys = _checked_members(out_path, request, raw, runner.name)
        try:
            arrays = load_arrays(out_path, max_bytes=eval_output_bytes(request))
        except (OSError, InboundError) as exc:
            raise _bad_outputs(runner.name, str(exc)) from None
        if not isinstance(arrays, dict):
            raise _bad_outputs(runner.name, "a single array, not an .npz archive")
        outputs = [np.asarray(arrays[k]) for k in keys]
    names = [str(o.get("name", f"out{i}")) for i, o in enumerate(raw.outputs)]
    return outputs, names, raw


def _checked_members(path: Path, request: Request, raw: RawRun, where: str) -> list[str]:
    """The output keys ``out0``, ``out1``... in order, after checking the archive's headers before anything is
    loaded: only those keys, one per output the agent described, the eval samples on axis 0, and the declared
    and stored sizes within what the request can produce (a device is untrusted: a zip bomb is refused unread).

    Raises:
        RunnerError: unexpected keys, a member count or sample count that does not match, or sizes over budget.
    """
    limit = eval_output_bytes(request)
    try:
        found = members(path)
        samples, _ = samples_and_bytes(Path(request.eval_npz or ""))
    except NpzHeaderError as exc:
        raise _bad_outputs(where, str(exc)) from None
    expected = [f"out{i}" for i in range(len(found))]
    keys = sorted((m.key for m in found), key=lambda k: (len(k), k))
    if keys != expected or (raw.outputs and len(raw.outputs) != len(found)):
        raise _bad_outputs(where, f"keys {', '.join(keys[:5]) or '(none)'} where out0..out{len(raw.outputs) - 1} "
                                  "(one per model output) were expected")
    for m in found:
        if not m.shape or m.shape[0] != samples:
            raise _bad_outputs(where, f"{m.key} has shape {list(m.shape)}, not {samples} samples on axis 0")
    declared, stored = sum(m.nbytes for m in found), sum(m.stored_bytes for m in found)
    if max(declared, stored) > limit:
        raise _bad_outputs(where, f"it declares {max(declared, stored) / 2**20:,.0f} MiB of arrays, more than the "
                                  f"{limit / 2**20:,.0f} MiB {samples} samples can produce (a zip bomb?)")
    return keys


def _bad_outputs(where: str, why: str) -> RunnerError:
    return RunnerError(f"the agent on {where} wrote eval outputs that cannot be right ({clean_text(why, 300)}); none "
                       "were loaded: check the agent there (edgeopt devices check) or update it")
