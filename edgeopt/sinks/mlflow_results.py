"""Bench and sweep results to MLflow (the qualify export is :mod:`edgeopt.sinks.mlflow_sink`).

``edgeopt bench ... --mlflow [URI]`` and ``edgeopt sweep ... --mlflow [URI]`` log one MLflow run each: params
(model, target, runtime, settings), metrics (latency percentiles, throughput, memory, energy; per sweep level
``<recipe>/<runtime>.<metric>``) and tags (kind, verdict). Needs the ``[mlflow]`` extra (mlflow-skinny).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..metrics.result import BenchResult
from ..sweep.result import SweepResult
from .mlflow_sink import _key, require_mlflow


def bench_params(r: BenchResult) -> dict[str, str]:
    """Flat string params of a benchmark run."""
    s = r.settings
    params = {"model": Path(r.model.path).name, "model_sha256": r.model.sha256, "target": r.target,
              "runner": r.runner, "runtime": f"{r.runtime.name} {r.runtime.version}", "batch": str(s.batch),
              "threads": str(s.threads), "streams": str(s.streams), "iterations": str(s.iterations),
              "min_duration_s": str(s.min_duration_s), "seed": str(s.seed), "edgeopt_version": r.edgeopt_version,
              "target_mismatch": "; ".join(r.target_mismatch)}
    return {k: v[:500] for k, v in params.items()}


def bench_metrics(r: BenchResult, prefix: str = "") -> dict[str, float]:
    """Latency percentiles, throughput, cold start, memory and energy of one run (``prefix`` for several)."""
    out = {f"{prefix}latency_ms_{p}": float(getattr(r.latency_ms, p)) for p in ("p50", "p90", "p95", "p99", "p999",
                                                                               "mean")}
    out.update({f"{prefix}throughput_ips": r.throughput_ips, f"{prefix}cold_start_ms": r.cold_start_ms.total,
                f"{prefix}valid": float(r.valid), f"{prefix}passed": float(r.passed),
                f"{prefix}samples": float(r.run.samples)})
    if r.memory_mb.peak is not None:
        out[f"{prefix}memory_mb_peak"] = r.memory_mb.peak
    if r.energy is not None and r.energy.energy_per_inference_mj is not None:
        out[f"{prefix}energy_mj"] = r.energy.energy_per_inference_mj
        out[f"{prefix}energy_is_estimate"] = float(r.energy.source == "estimate")
    return out


def sweep_params(r: SweepResult) -> dict[str, str]:
    """Flat string params of a sweep."""
    rec = r.recommendation
    params = {"model": Path(r.model).name, "model_sha256": r.model_sha256, "target": r.target, "runner": r.runner,
              "metric": r.metric, "min_retention": str(r.min_retention), "objective": r.objective,
              "runtimes": ",".join(r.runtimes), "recommendation": f"{rec.recipe}/{rec.runtime}" if rec else "",
              "reason": r.reason or ""}
    return {k: v[:500] for k, v in params.items()}


def sweep_metrics(r: SweepResult) -> dict[str, float]:
    """Per level ``<recipe>/<runtime>.<metric>``: latency, retention, size, memory, energy, pass."""
    out: dict[str, float] = {"levels": float(len(r.levels)), "recommended": float(r.recommendation is not None)}
    for lv in r.levels:
        pre = _key(f"{lv.recipe}/{lv.runtime}") + "."
        out.update({f"{pre}latency_ms_p50": lv.latency_ms, f"{pre}latency_ms_p99": lv.latency_ms_p99,
                    f"{pre}retention": lv.retention, f"{pre}size_mb": lv.size_bytes / 1e6,
                    f"{pre}passed": float(lv.passed)})
        if lv.memory_mb_peak is not None:
            out[f"{pre}memory_mb_peak"] = lv.memory_mb_peak
        if lv.energy_mj is not None:
            out[f"{pre}energy_mj"] = lv.energy_mj
    return out


def _log(kind: str, name: str, params: dict[str, str], metrics: dict[str, float], tags: dict[str, str],
         artifacts: list[str], tracking_uri: str | None, experiment: str) -> str:
    mlflow: Any = require_mlflow()
    if tracking_uri is not None:
        mlflow.set_tracking_uri(tracking_uri)
    mlflow.set_experiment(experiment)
    with mlflow.start_run(run_name=name) as run:
        mlflow.set_tags({"edgeopt.kind": kind, **tags})
        mlflow.log_params(params)
        mlflow.log_metrics(metrics)
        for path in artifacts:
            if Path(path).is_file():
                mlflow.log_artifact(path, artifact_path="report")
        return str(run.info.run_id)


def log_bench(r: BenchResult, *, tracking_uri: str | None = None, experiment: str = "edgeopt-bench") -> str:
    """Log a benchmark run as one MLflow run; returns its id.

    Raises:
        InputError: mlflow is not installed.
    """
    return _log("bench", f"bench-{Path(r.model.path).stem}-{r.target}", bench_params(r), bench_metrics(r),
                {"edgeopt.verdict": "pass" if r.passed else "fail"}, [], tracking_uri, experiment)


def log_sweep(r: SweepResult, *, tracking_uri: str | None = None, experiment: str = "edgeopt-sweep") -> str:
    """Log a sweep as one MLflow run (its Pareto chart as an artifact); returns its id.

    Raises:
        InputError: mlflow is not installed.
    """
    return _log("sweep", f"sweep-{Path(r.model).stem}-{r.target}", sweep_params(r), sweep_metrics(r),
                {"edgeopt.verdict": "recommended" if r.recommendation else "none"},
                [r.plot] if r.plot else [], tracking_uri, experiment)
