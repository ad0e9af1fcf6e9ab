"""``edgeopt bench`` with many runs: one model on every ``--devices`` device (edgeopt/fleet), or every artifact of
an optimize manifest (edgeopt/bench/manifest.py). Kept apart so ``bench_cmd`` stays a thin command."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ExitCode, InputError
from ..settings import MeasureSettings, RemoteSpec
from .fleet_options import FleetOptions
from .history_options import HistoryOptions
from .json_out import emit_json
from .progress import StderrProgress

if TYPE_CHECKING:
    from rich.console import Console

    from ..bench.manifest import ManifestBenchEntry


def check_combination(model: Path, *, fleet: FleetOptions, tradeoff: bool, mlflow: bool) -> None:
    """Refuse option combinations bench cannot honour, rather than ignore one of them.

    Raises:
        InputError: a trade-off (several --batch/--threads values) on --devices, or --mlflow with several runs.
    """
    if tradeoff and fleet.enabled:
        raise InputError("--devices takes one --batch and one --threads value; measure the trade-off on one device "
                         "(--device NAME or --host)")
    many = "--devices" if fleet.enabled else "a manifest" if model.suffix.lower() == ".json" else \
        "several --batch/--threads values" if tradeoff else None
    if mlflow and many:
        raise InputError(f"--mlflow logs one run; with {many} drop --mlflow (or bench one model on one place)")


def bench_many(model: Path, settings: MeasureSettings, *, fleet: FleetOptions, target: str | None,
               remote: RemoteSpec, targets_dirs: tuple[Path, ...], history: HistoryOptions, as_json: bool,
               samples: bool) -> int:
    """Many runs: one model on every ``--devices`` device in parallel, or every artifact of a manifest."""
    if fleet.enabled:
        from .fleet_cmd import run_fleet_bench

        if model.suffix.lower() == ".json":
            raise InputError(f"{model}: --devices benchmarks one model file; pass an artifact of the manifest")
        return run_fleet_bench(model, settings, fleet=fleet, remote=remote, target=target, targets_dirs=targets_dirs,
                               history=history, samples=samples, as_json=as_json)
    return bench_manifest(model, settings, target=target, remote=remote, targets_dirs=targets_dirs,
                          as_json=as_json, samples=samples)


def bench_manifest(manifest: Path, settings: MeasureSettings, *, target: str | None, remote: RemoteSpec,
                   targets_dirs: tuple[Path, ...], as_json: bool, samples: bool) -> int:
    """Bench every artifact of an optimize manifest; exit 1 when any benchmarked one fails or is invalid."""
    from ..bench.manifest import benchmark_manifest, manifest_report

    with StderrProgress() as progress:
        entries = benchmark_manifest(manifest, target=target, settings=settings, remote=remote, progress=progress,
                                     targets_dirs=targets_dirs)
    if not samples:
        entries = [e if e.result is None else e.model_copy(update={"result": e.result.model_copy(
            update={"samples_ms": None})}) for e in entries]
    if as_json:
        emit_json(manifest_report(manifest, entries))
    else:
        render_manifest(manifest, entries)
    return int(ExitCode.GATE_FAILED if any(e.failed for e in entries) else ExitCode.OK)


def render_manifest(manifest: Path, entries: list[ManifestBenchEntry], console: Console | None = None) -> None:
    """The manifest's table: artifact names, skip reasons and invalid reasons are data, never markup."""
    import sys

    from rich.console import Console
    from rich.table import Table

    from ..bench.manifest import manifest_table
    from ..untrusted import for_rich

    header, *rows = manifest_table(entries)
    table = Table(title=for_rich(f"bench {manifest}"))
    for col in header:
        table.add_column(col)
    for row in rows:
        table.add_row(*(for_rich(cell) for cell in row))
    (console or Console(highlight=False, width=None if sys.stdout.isatty() else 160)).print(table)
