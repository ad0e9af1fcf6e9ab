"""``--mlflow URI`` / ``--mlflow-experiment NAME`` for bench and sweep (qualify sets its sink in the spec)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class MlflowTarget:
    """Where to log: a tracking URI (``default``: MLflow's own default) and an experiment."""

    uri: str | None
    experiment: str | None

    def log(self, kind: str, result: Any) -> None:
        """Log ``result`` (a bench or sweep result) and say where, on stderr."""
        from ..sinks import mlflow_results

        logger = mlflow_results.log_bench if kind == "bench" else mlflow_results.log_sweep
        run_id = logger(result, tracking_uri=None if self.uri == "default" else self.uri,
                        experiment=self.experiment or f"edgeopt-{kind}")
        click.echo(f"edgeopt: logged to MLflow run {run_id}", err=True)


def mlflow_options(f: F) -> F:
    """Add the two options; the command receives ``mlflow: MlflowTarget | None``."""
    def build(ctx: click.Context, param: click.Parameter, value: str | None) -> MlflowTarget | None:
        experiment = ctx.params.pop("mlflow_experiment", None)
        if value is None:
            return None
        from ..sinks.mlflow_sink import require_mlflow

        require_mlflow()  # refused before any device work
        return MlflowTarget(value, experiment)

    f = click.option("--mlflow", "mlflow", default=None, metavar="URI", callback=build,
                     help="Log the result to MLflow at this tracking URI ('default': MLflow's own; needs the "
                          "[mlflow] extra).")(f)
    return click.option("--mlflow-experiment", "mlflow_experiment", default=None, is_eager=True, expose_value=True,
                        metavar="NAME", help="MLflow experiment [default: edgeopt-bench / edgeopt-sweep].")(f)
