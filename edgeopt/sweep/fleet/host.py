"""A fleet sweep's host side, done once for every device: the eval data, the metric check and every recipe's
artifacts (optimize, convert, calibration), per distinct target of the selected devices.

Everything a device job needs goes into one directory, the *bundle* (``<out>/host/``): the model and its
companion files, the eval data as ``.npz`` (inputs + labels), the calibration data when one was given, and
``artifacts/<target>/<recipe>/``. The bundle travels to the device jobs by content hash (:class:`ModelRef`): a
shared path on this host, or its files' bytes through Ray's object store. Each recipe is built by
:func:`build_recipe`, an ordinary host task (in this process under the local executor; a ``ray.remote(num_cpus=1)``
task under Ray, on any node, returning its files' bytes when that node does not share this host's paths).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from ...calib import ImagePreprocessing
from ...errors import InputError, first_line
from ...evaluation import load_eval_data, resolve_metric
from ...fleet.artifacts import ModelRef
from ...fleet.executors import Executor
from ...fsutil import atomic_write_bytes
from ...optimize import OptimizeResult

EVAL_FILE = "eval.npz"


@dataclass(frozen=True)
class Bundle:
    """What every device job of a fleet sweep reads: one directory, by content hash.

    Attributes:
        ref: the bundle directory (``main == "."``).
        model: the model's path inside it (POSIX).
        calib: the calibration data's path inside it (None: the eval data).
        eval_samples: how many eval samples it holds.
        prebuilt: per target, per recipe: the optimize result (artifact paths relative to the bundle) or why the
            recipe does not apply there.
        seconds: wall time of the host side, s.
    """

    ref: ModelRef
    model: str
    calib: str | None
    eval_samples: int
    prebuilt: Mapping[str, Mapping[str, OptimizeResult | str]] = field(default_factory=dict)
    seconds: float = 0.0

    def for_target(self, target: str, root: Path) -> dict[str, OptimizeResult | str]:
        """The target's recipes with their artifact paths under ``root`` (where the bundle is on this worker)."""
        return {name: rebase(res, root) if isinstance(res, OptimizeResult) else res
                for name, res in self.prebuilt.get(target, {}).items()}


@dataclass(frozen=True)
class Built:
    """What :func:`build_recipe` returns: the result relative to its output directory, or the error."""

    target: str
    recipe: str
    result: OptimizeResult | None = None
    error: str | None = None
    files: dict[str, bytes] | None = None


def rebase(result: OptimizeResult, root: Path) -> OptimizeResult:
    """``result`` with its artifact paths (relative) put under ``root``."""
    arts = [a.model_copy(update={"path": str(root / a.path)}) for a in result.artifacts]
    return result.model_copy(update={"artifacts": arts, "out_dir": str(root / result.out_dir)})


def _relative(result: OptimizeResult, base: Path, prefix: str) -> OptimizeResult:
    """``result`` with its artifact paths relative to the bundle (``prefix`` + path under ``base``)."""
    def rel(path: str) -> str:
        return (PurePosixPath(prefix) / Path(path).resolve().relative_to(base.resolve()).as_posix()).as_posix()

    arts = [a.model_copy(update={"path": rel(a.path)}) for a in result.artifacts]
    return result.model_copy(update={"artifacts": arts, "out_dir": prefix, "manifest_path": rel(result.manifest_path)})


def build_recipe(inputs: ModelRef, blobs: Mapping[str, bytes] | None, model: str, calib: str, target: str,
                 recipe: str, preprocessing: ImagePreprocessing | None, targets_dirs: tuple[Path, ...],
                 out: str | None) -> Built:
    """One recipe's artifacts for one target: an ordinary host task (module level, so Ray workers import it).

    Args:
        inputs: the bundle so far (model, eval and calibration data); blobs: its bytes when not a shared path.
        model, calib: their paths inside the bundle. target, recipe: what to build.
        preprocessing, targets_dirs: as for ``optimize``.
        out: where to write, a path this worker shares with the host; None: a temp dir, files returned as bytes.
    """
    from ...optimize import optimize_graph  # the heavy stack loads on the worker

    root = inputs.locate(blobs)
    prefix = f"artifacts/{target}/{recipe}"
    work = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="edgeopt-build-"))
    try:
        res = optimize_graph(root / model, target=target, recipe=recipe, calib=root / calib, out_dir=work,
                             fidelity=False, bench=False, preprocessing=preprocessing, targets_dirs=targets_dirs)
        files = None if out is not None else {p.relative_to(work).as_posix(): p.read_bytes()
                                              for p in sorted(work.rglob("*")) if p.is_file()}
        return Built(target, recipe, result=_relative(res, work, prefix), files=files)
    except InputError as exc:
        return Built(target, recipe, error=first_line(exc))
    except Exception as exc:  # a failing pass: this recipe's error, reported like a recipe that does not apply
        return Built(target, recipe, error=f"{type(exc).__name__}: {first_line(exc)}")
    finally:
        if out is None:
            shutil.rmtree(work, ignore_errors=True)


def _link_or_copy(src: Path, dst: Path) -> None:
    """``dst`` becomes a hard link to (or a copy of) ``src``; ``src`` is never written or removed."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.exists() and dst.resolve() == src.resolve():
        return  # the bundle's own copy given as the input
    with contextlib.suppress(FileNotFoundError):
        dst.unlink()
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def stage_inputs(model: Path, eval_data: Path, *, calib: Path | None, preprocessing: ImagePreprocessing | None,
                 eval_limit: int | None, metric: Any, root: Path) -> tuple[str, str | None, int]:
    """Put the model, the eval data (checked, as ``eval.npz``) and the calibration data into the bundle ``root``.

    Returns:
        (the model's path in the bundle, the calibration data's path or None, the eval sample count).

    Raises:
        InputError: bad eval data, or a metric that needs labels the eval data lacks.
    """
    ref = ModelRef.of(model)
    for rel in ref.files:
        _link_or_copy(Path(ref.root) / rel, root / "model" / rel)
    data = load_eval_data(eval_data, model, preprocessing=preprocessing, limit=eval_limit)
    met = resolve_metric(metric, has_labels=data.labels is not None)
    if met.needs_labels and data.labels is None:
        raise InputError(f"metric {met.name} needs labels: add 'labels' to {eval_data}, or use --metric agreement")
    arrays = {**data.inputs, **({"labels": data.labels} if data.labels is not None else {})}
    tmp = root / "eval.tmp.npz"
    np.savez(tmp, **arrays)  # type: ignore[arg-type]
    tmp.replace(root / EVAL_FILE)
    calib_rel = None
    if calib is not None:
        if not calib.exists():
            raise InputError(f"--calib {calib} not found: pass an .npz or an image folder (default: the eval data)")
        calib_rel = f"calib/{calib.name}"
        if calib.is_dir():
            shutil.copytree(calib, root / calib_rel, dirs_exist_ok=True)
        else:
            _link_or_copy(calib, root / calib_rel)
    return f"model/{ref.main}", calib_rel, data.count


def build_all(executor: Executor, inputs: ModelRef, *, model: str, calib: str, targets: Sequence[str],
              recipes: Sequence[str], named: bool, preprocessing: ImagePreprocessing | None,
              targets_dirs: tuple[Path, ...]) -> dict[str, dict[str, OptimizeResult | str]]:
    """Every (target, recipe) built as a host task on ``executor``; files returned as bytes written into the bundle.

    Raises:
        InputError: a recipe the user named (``named``) does not apply to a target.
    """
    root = Path(inputs.root)
    shared = executor.shares_paths()
    blobs = None if shared else inputs.read_blobs()
    calls = [(inputs, blobs, model, calib, t, r, preprocessing, targets_dirs,
              str(root / "artifacts" / t / r) if shared else None) for t in targets for r in recipes]
    out: dict[str, dict[str, OptimizeResult | str]] = {t: {} for t in targets}
    for built in executor.map_host(build_recipe, calls):
        if built.error is not None or built.result is None:
            if named:
                raise InputError(f"recipe {built.recipe} on target {built.target}: {built.error}")
            out[built.target][built.recipe] = built.error or "not built"
            continue
        for rel, data in (built.files or {}).items():
            atomic_write_bytes(root / "artifacts" / built.target / built.recipe / rel, data)
        out[built.target][built.recipe] = built.result
    return out
