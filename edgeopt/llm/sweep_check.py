"""The LLM sweep's shipped-as-measured check: ``<out>/recommended/`` re-scored from its files alone.

Once the recommended level is staged as a deployment, the staged folder is read back as one
(:func:`~edgeopt.deploy.load_deployment`: every file's size and SHA-256 against ``deployment.json``) and scored by a
fresh agent through the runner the levels were measured with: the deployment's runtime, runtime options and
threads, the sweep's eval text and retention settings, against the reference scores the sweep scored its levels
against (the runtime's FP32 export). Its retention on the sweep's metric is compared with the level's measured
one within the one-pass sweep's tolerance; the record is the one-pass sweep's
(:func:`edgeopt.sweep.ship.check.shipped_record`), so ``shipped_check`` reads the same for every kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..deploy import Deployment, ShippedCheck, load_deployment
from ..deploy.io import DeploymentError
from ..errors import InputError
from ..runners import Runner
from ..sweep.ship.check import shipped_record
from .retention import RetentionSettings, Scores, compare, runtime_of, score_folder, vocab_covered


@dataclass(frozen=True)
class LlmShipCheck:
    """What re-scoring the shipped folder needs from the sweep that measured it.

    Attributes:
        runner: the runner the levels were scored and benched through (each score is a fresh agent process).
        references: per runtime, the scores of its FP32 reference the levels were compared with.
        text: the held-out eval text.
        settings: the retention settings the levels were scored with (threads: the deployment's replace them).
    """

    runner: Runner
    references: Mapping[str, Scores]
    text: str
    settings: RetentionSettings


def _retention(folder: Path, deployment: Deployment, ref: Scores, metric: str, check: LlmShipCheck,
               options: Mapping[str, Any]) -> float:
    settings = check.settings.model_copy(update={"threads": deployment.threads})
    scores = score_folder(folder, check.text, settings, check.runner, kl_ids=ref["kl_ids"],
                          runtime_options=dict(options))
    return compare(ref, scores, metric=metric, vocab_covered=vocab_covered(ref)).retention


def check_llm_shipped(folder: Path, metric: str, check: LlmShipCheck) -> ShippedCheck:
    """Re-score the deployment in ``folder`` from its files alone, as shipped (and, when it records runtime
    options, with the runtime's defaults), on the sweep's ``metric``.

    Raises:
        DeploymentError: a file differs from ``deployment.json`` (edited, missing), or the folder is another
            runtime's than the deployment names (exit 2).
        RunnerError: the agent could not load or run the shipped folder (exit 3).
    """
    deployment, root = load_deployment(folder)  # every file as recorded before it is scored
    loads = (root / deployment.model).parent  # the generative runtimes load the folder holding the marker file
    found = runtime_of(loads)
    if found != deployment.runtime:
        raise DeploymentError(f"{root / 'deployment.json'}: runtime {deployment.runtime!r} but the folder is a "
                              f"{found} folder; restore it from the sweep's output")
    ref = check.references.get(deployment.runtime)
    if ref is None:
        raise InputError(f"no {deployment.runtime} reference scores in this sweep to re-check {root} against; "
                         "re-run the sweep with that runtime")
    shipped = _retention(loads, deployment, ref, metric, check, deployment.runtime_options)
    defaults = (shipped if not deployment.runtime_options
                else _retention(loads, deployment, ref, metric, check, {}))
    return shipped_record(deployment, deployment.files, shipped, defaults)
