"""Write and read ``deployment.json``: atomic writes, one-line errors naming the file, hashes checked on load."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from .. import inbound, jsonio
from ..errors import InputError, SchemaProblem
from ..fsutil import atomic_write_text, sha256_file
from ..untrusted import for_json
from .options import options_problem
from .schema import Deployment
from .workload import workload_problem

DEPLOYMENT_FILE = "deployment.json"
_MAX_BYTES = 4 << 20  # a deployment record is a few KiB; refuse anything absurd (or nested deep) before parsing


class DeploymentError(InputError):
    """A deployment folder or ``deployment.json`` that cannot be used as given (exit 2)."""


def _record_path(path: Path) -> Path:
    return path / DEPLOYMENT_FILE if path.is_dir() else path


def is_deployment(path: Path) -> bool:
    """Whether ``path`` is a deployment: a ``deployment.json`` or a folder holding one."""
    record = _record_path(Path(path))
    return record.name == DEPLOYMENT_FILE and record.is_file()


def save_deployment(folder: Path, deployment: Deployment) -> Path:
    """Write ``folder/deployment.json`` atomically (the files it names must already be in ``folder``)."""
    record = Path(folder) / DEPLOYMENT_FILE
    atomic_write_text(record, for_json(deployment.model_dump_json(indent=2)) + "\n")
    return record


def load_deployment(path: Path, *, check_files: bool = True) -> tuple[Deployment, Path]:
    """Read a deployment (its folder or its ``deployment.json``); its folder is returned beside it.

    Args:
        path: the folder or the ``deployment.json`` file.
        check_files: verify every listed file exists with the recorded size and SHA-256.

    Raises:
        DeploymentError: missing or unreadable record, bad JSON or schema (over 4 MiB, nested past
            :data:`edgeopt.jsonio.MAX_DEPTH`), a runtime option its runtime's schema refuses or one naming a path
            (:mod:`.options`), a recorded workload its kind's workload model refuses (:mod:`.workload`), a file
            missing, changed or outside the folder; one line naming the file and the fix.
    """
    record = _record_path(Path(path))
    if not record.is_file():
        raise DeploymentError(f"{path}: no {DEPLOYMENT_FILE} there; pass a folder written by 'edgeopt sweep' "
                              "(<out>/recommended) or its deployment.json")
    try:
        data = inbound.read_json(record, max_bytes=_MAX_BYTES)
        deployment = Deployment.model_validate(data)
    except OSError as exc:
        raise DeploymentError(f"{record}: cannot read it ({exc.strerror}); check the path and its permissions") \
            from None
    except jsonio.JsonLimitError as exc:
        raise DeploymentError(f"{record}: not a deployment record ({exc}); pass the {DEPLOYMENT_FILE} a sweep "
                              "wrote") from None
    except json.JSONDecodeError as exc:
        raise DeploymentError(f"{record}: not valid JSON ({exc}); restore it from the sweep's output") from None
    except ValidationError as exc:
        problem = SchemaProblem.of(exc, unknown_first=True)
        raise DeploymentError(f"{record}: {problem.key or 'record'}: {problem.msg}{problem.got}{problem.more}; "
                              "restore it from the sweep's output or fix that field") from None
    refused = options_problem(deployment, record) or workload_problem(deployment, record)
    if refused:
        raise DeploymentError(refused)
    folder = record.parent
    if check_files:
        _check_files(deployment, folder, record)
    return deployment, folder


def _check_files(deployment: Deployment, folder: Path, record: Path) -> None:
    names = {f.path for f in deployment.files}
    if deployment.model not in names:
        raise DeploymentError(f"{record}: model {deployment.model!r} is not one of its files; restore it from the "
                              "sweep's output")
    root = folder.resolve()
    for item in deployment.files:
        file = (folder / item.path).resolve()
        if not file.is_relative_to(root):
            raise DeploymentError(f"{record}: file {item.path!r} lies outside the deployment folder; deployments "
                                  "hold their files")
        if not file.is_file():
            raise DeploymentError(f"{record}: file {item.path!r} is missing; copy the whole folder, not only "
                                  f"{DEPLOYMENT_FILE}")
        if file.stat().st_size != item.size_bytes or sha256_file(file) != item.sha256:
            raise DeploymentError(f"{record}: file {item.path!r} changed since it was measured (size or SHA-256 "
                                  "differs); re-run the sweep, or restore the measured file")
