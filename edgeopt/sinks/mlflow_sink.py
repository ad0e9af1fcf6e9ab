"""Export a qualification to MLflow: params (spec, model, recipe, settings), metrics per device, the reports as
artifacts. Needs the ``[mlflow]`` extra (``pip install 'edgeopt[mlflow]'``, which installs ``mlflow-skinny``).

Metric names are ``<device>.<metric>`` (``local.latency_ms_p99``) so several devices share one MLflow run. The
tracking URI is whatever MLflow accepts: a server URL, ``sqlite:///mlflow.db``, or a ``file:`` store (MLflow 3
keeps the file store in maintenance mode and refuses it unless ``MLFLOW_ALLOW_FILE_STORE=true`` is set).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..qualify.result import GateStatus, QualifyResult

_KEY = re.compile(r"[^A-Za-z0-9_\-. /]")


def require_mlflow() -> Any:
    """The ``mlflow`` module.

    Raises:
        InputError: it is not installed (the message says how to install it).
    """
    try:
        import mlflow
    except ImportError:
        raise InputError("the MLflow sink needs mlflow: pip install 'edgeopt[mlflow]' (mlflow-skinny), or remove "
                         "sinks.mlflow from the spec") from None
    return mlflow


def _key(text: str) -> str:
    return _KEY.sub("_", text)


def qualify_params(result: QualifyResult) -> dict[str, str]:
    """Flat string params of a qualification (MLflow params are strings of at most a few hundred chars)."""
    params = {
        "spec": result.name,
        "spec_sha256": result.spec_sha256,
        "model": Path(result.model.reference_path).name,
        "model_sha256": result.model.reference_sha256,
        "source": result.model.source,
        "recipe": result.model.recipe or "",
        "profiles": ",".join(Path(p).stem for p in result.profiles),
        "devices": ",".join(d.label for d in result.devices),
        "edgeopt_version": result.edgeopt_version,
        "seed": str(result.fingerprint.get("seed")),
    }
    for key, value in (result.fingerprint.get("measure") or {}).items():
        params[f"measure.{key}"] = str(value)
    return {k: v[:500] for k, v in params.items()}


def qualify_metrics(result: QualifyResult) -> dict[str, float]:
    """Numeric metrics per device, plus pass/fail per gate (1/0)."""
    metrics: dict[str, float] = {"passed": float(result.passed), "exit_code": float(result.exit_code)}
    for d in result.devices:
        pre = _key(d.label)
        for g in d.gates:
            metrics[f"{pre}.gate.{g.gate}"] = 1.0 if g.status is GateStatus.PASS else 0.0
            if g.measured is not None:
                metrics[f"{pre}.{g.gate}.measured"] = float(g.measured)
        b = d.bench
        if b is None:
            continue
        for p in ("p50", "p90", "p95", "p99", "p999", "mean"):
            metrics[f"{pre}.latency_ms_{p}"] = float(getattr(b.latency_ms, p))
        metrics[f"{pre}.throughput_ips"] = b.throughput_ips
        metrics[f"{pre}.cold_start_ms"] = b.cold_start_ms.total
        if b.memory_mb.peak is not None:
            metrics[f"{pre}.memory_mb_peak"] = b.memory_mb.peak
        if b.memory_mb.delta is not None:
            metrics[f"{pre}.memory_mb_delta"] = b.memory_mb.delta
        if b.energy is not None and b.energy.energy_per_inference_mj is not None:
            metrics[f"{pre}.energy_mj"] = b.energy.energy_per_inference_mj
            metrics[f"{pre}.energy_is_estimate"] = float(b.energy.source == "estimate")
        if d.costs is not None:
            metrics[f"{pre}.cost_per_million"] = d.costs.cost_per_million
            metrics[f"{pre}.co2_g_per_million"] = d.costs.co2_g_per_million
    for target, r in result.retention.items():
        if r.retention is not None:
            metrics[f"{_key(target)}.retention"] = r.retention
    return metrics


def log_qualify(result: QualifyResult, *, tracking_uri: str | None = None, experiment: str = "edgeopt-qualify",
                run_name: str | None = None) -> str:
    """Log ``result`` as one MLflow run and return its run id.

    Raises:
        InputError: mlflow is not installed.
    """
    mlflow = require_mlflow()
    if tracking_uri is not None:
        mlflow.set_tracking_uri(tracking_uri)
    mlflow.set_experiment(experiment)
    with mlflow.start_run(run_name=run_name or f"qualify-{result.name}-{result.group_id}") as run:
        mlflow.set_tags({"edgeopt.kind": "qualify", "edgeopt.verdict": "pass" if result.passed else "fail",
                         "edgeopt.group_id": result.group_id})
        mlflow.log_params(qualify_params(result))
        mlflow.log_metrics(qualify_metrics(result))
        for path in result.reports.values():
            if Path(path).is_file():
                mlflow.log_artifact(path, artifact_path="report")
        return str(run.info.run_id)
