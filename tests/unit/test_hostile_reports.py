"""Every result kind through every renderer, with a hostile string in every string field (generated from the
pydantic schemas by tests/hostile_kit.py, never listed by hand): terminal tables, plain text, report.html,
summary.md, junit.xml, result.json and the other pages show no escape sequence, no control character, no rich
markup effect and no raw HTML. docs/reliability.md, "Untrusted strings: every renderer"."""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from tests import hostile_kit as hk


@dataclass(frozen=True)
class Kind:
    """A result kind: its schema, and a base instance the filler starts from (None: generated from the schema)."""

    name: str
    model: Callable[[], type]
    base: Callable[[], Any] = lambda: None
    many: bool = False  # the renderer takes a list of them


def _bench_base() -> Any:
    from tests.synthetic_results import bench_result

    return bench_result()


def _qualify_base() -> Any:
    from tests.unit.reports.builders import device, qualify_result

    return qualify_result([device("a"), device("b", error="the link is down")])


def _t(dotted: str) -> Callable[[], type]:
    def load() -> type:
        module, name = dotted.rsplit(".", 1)
        return getattr(__import__(module, fromlist=[name]), name)  # type: ignore[no-any-return]
    return load


KINDS = {k.name: k for k in (
    Kind("bench", _t("edgeopt.metrics.result.BenchResult"), _bench_base),
    Kind("llm-bench", _t("edgeopt.bench.llm.result.LlmBenchResult")),
    Kind("kind-bench", _t("edgeopt.metrics.kind_result.KindBenchResult")),
    Kind("profile", _t("edgeopt.profile.schema.ProfileResult")),
    Kind("profile-comparison", _t("edgeopt.profile.schema.ProfileComparison")),
    Kind("sweep", _t("edgeopt.sweep.result.SweepResult")),
    Kind("llm-sweep", _t("edgeopt.llm.sweep_result.LlmSweepResult")),
    Kind("fleet-sweep", _t("edgeopt.sweep.fleet.result.FleetSweepResult")),
    Kind("llm-fleet-sweep", _t("edgeopt.llm.sweep_fleet.LlmFleetSweepResult")),
    Kind("qualify", _t("edgeopt.qualify.result.QualifyResult"), _qualify_base),
    Kind("fleet", _t("edgeopt.fleet.result.FleetResult")),
    Kind("llm-fleet", _t("edgeopt.bench.llm.fleet.LlmFleetResult")),
    Kind("history-runs", _t("edgeopt.history.records.RunRecord"), many=True),
    Kind("history-compare", _t("edgeopt.history.compare.RunComparison")),
    Kind("history-baselines", _t("edgeopt.history.records.Baseline"), many=True),
    Kind("history-llm-compare", _t("edgeopt.history.cell_compare.CellRunComparison")),
    Kind("devices", _t("edgeopt.devices.schema.Inventory")),
    Kind("devices-check", _t("edgeopt.devices.check.DeviceReport")),
    Kind("devices-setup", _t("edgeopt.devices.fleet_setup.SetupRow"), many=True),
    Kind("fleet-check", _t("edgeopt.devices.fleet_check.CheckRow"), many=True),
    Kind("tradeoff", _t("edgeopt.bench.tradeoff.TradeoffResult")),
    Kind("optimize", _t("edgeopt.optimize.api.OptimizeResult")),
    Kind("llm-optimize", _t("edgeopt.llm.optimize.LlmOptimizeResult")),
    Kind("inspect", _t("edgeopt.analysis.report.InspectResult")),
    Kind("targets", _t("edgeopt.targets.schema.Target"), many=True),
    Kind("bench-manifest", _t("edgeopt.bench.manifest.ManifestBenchEntry"), many=True),
)}


def build(kind: Kind, flag: bool) -> Any:
    one = hk.hostile(kind.model(), kind.base(), hk.Fill(flag=flag))
    return [one] if kind.many else one


# ---- renderers: (kind, syntax, render(result, tmp_path) -> output text or None when printed) ----

def _m(dotted: str) -> types.ModuleType:
    return __import__(dotted, fromlist=["x"])


def _call(module: str, fn: str, *args: Any) -> Callable[[Any, Path], None]:
    def render(result: Any, tmp: Path) -> None:
        getattr(_m(module), fn)(result, *args)
    return render


def _file(write: Callable[[Any, Path], Any], name: str) -> Callable[[Any, Path], str]:
    def render(result: Any, tmp: Path) -> str:
        text = write(result, tmp)
        return text if isinstance(text, str) else (tmp / name).read_text(encoding="utf-8")
    return render


def _qualify_reports(fmt: str) -> Callable[[Any, Path], str]:
    def render(result: Any, tmp: Path) -> str:
        from edgeopt.reports import write_reports

        paths = write_reports(result, tmp)
        return paths[fmt].read_text(encoding="utf-8")
    return render


def _kind_devices(fmt: str) -> Callable[[Any, Path], str]:
    """The qualify report with every device a plug-in kind's (only ``kind_bench`` set), so its section renders."""
    def render(result: Any, tmp: Path) -> str:
        devices = [d.model_copy(update={"llm": None, "bench": None}) for d in result.devices]
        return _qualify_reports(fmt)(result.model_copy(update={"devices": devices}), tmp)
    return render


def _emit_json(result: Any, tmp: Path) -> None:
    from edgeopt.cli.json_out import emit_json

    emit_json([r.model_dump(mode="json", warnings=False) for r in result] if isinstance(result, list) else result)


def _history_runs(result: Any, tmp: Path) -> None:
    _m("edgeopt.cli.history_render").render_runs(result, tmp / "h.sqlite3")


def _history_baselines(result: Any, tmp: Path) -> None:
    _m("edgeopt.cli.history_render").render_baselines(result, tmp / "h.sqlite3")


def _manifest(result: Any, tmp: Path) -> None:
    _m("edgeopt.cli.bench_many").render_manifest(tmp / "manifest.json", result, _TERMINAL[0])


RENDERERS: list[tuple[str, str, str, Callable[[Any, Path], Any]]] = [
    ("bench", "terminal", "cli.render.render_bench", _call("edgeopt.cli.render", "render_bench")),
    ("llm-bench", "terminal", "bench.llm.render.render_llm_bench",
     _call("edgeopt.bench.llm.render", "render_llm_bench")),
    ("kind-bench", "terminal", "cli.bench_kind_cmd.render_kind_bench",
     _call("edgeopt.cli.bench_kind_cmd", "render_kind_bench")),
    ("profile", "terminal", "profile.render.render_profile", _call("edgeopt.profile.render", "render_profile")),
    ("profile", "html", "reports.profile_html.render_profile_html", _file(lambda r, t: _m(
        "edgeopt.reports.profile_html").render_profile_html(r), "")),
    ("profile", "json", "profile.chrome_trace", _file(lambda r, t: _m(
        "edgeopt.profile.chrome_trace").write_chrome_trace(t / "trace.json", [r], ["a"]), "trace.json")),
    ("profile-comparison", "terminal", "profile.render.render_comparison",
     _call("edgeopt.profile.render", "render_comparison")),
    ("profile-comparison", "html", "reports.profile_html.render_profile_html (comparison)", _file(lambda r, t: _m(
        "edgeopt.reports.profile_html").render_profile_html(r), "")),
    ("sweep", "plain", "cli.sweep_cmd._render", _call("edgeopt.cli.sweep_cmd", "_render")),
    ("llm-sweep", "plain", "llm.cli.sweep._render", _call("edgeopt.llm.cli.sweep", "_render")),
    ("fleet-sweep", "terminal", "cli.sweep_fleet.render_fleet_sweep (+ warnings)", lambda r, t: _m(
        "edgeopt.cli.sweep_fleet").report_fleet_sweep(r, False, _m("edgeopt.cli.sweep_fleet").render_fleet_sweep)),
    ("llm-fleet-sweep", "terminal", "llm.cli.fleet_sweep.render_llm_fleet_sweep (+ warnings)", lambda r, t: _m(
        "edgeopt.cli.sweep_fleet").report_fleet_sweep(r, False, _m("edgeopt.llm.cli.fleet_sweep")
                                                      .render_llm_fleet_sweep)),
    ("qualify", "terminal", "cli.qualify_render.render_qualify",
     _call("edgeopt.cli.qualify_render", "render_qualify")),
    ("qualify", "html", "reports report.html", _qualify_reports("html")),
    ("qualify", "markdown", "reports summary.md", _qualify_reports("markdown")),
    ("qualify", "xml", "reports junit.xml", _qualify_reports("junit")),
    ("qualify", "json", "reports result.json", _qualify_reports("json")),
    ("qualify", "html", "reports report.html (plug-in kind devices)", _kind_devices("html")),
    ("qualify", "markdown", "reports summary.md (plug-in kind devices)", _kind_devices("markdown")),
    ("fleet", "terminal", "cli.fleet_render.render_fleet", _call("edgeopt.cli.fleet_render", "render_fleet")),
    ("fleet", "xml", "bench.fleet.junit.render_fleet_junit",
     _file(lambda r, t: _m("edgeopt.bench.fleet.junit").render_fleet_junit(r), "")),
    ("llm-fleet", "terminal", "bench.llm.render.render_llm_fleet",
     _call("edgeopt.bench.llm.render", "render_llm_fleet")),
    ("history-runs", "terminal", "cli.history_render.render_runs", _history_runs),
    ("history-compare", "terminal", "cli.history_render.render_comparison",
     _call("edgeopt.cli.history_render", "render_comparison")),
    ("history-baselines", "terminal", "cli.history_render.render_baselines", _history_baselines),
    ("history-llm-compare", "terminal", "cli.history_render.render_cell_comparison",
     _call("edgeopt.cli.history_render", "render_cell_comparison")),
    ("devices", "terminal", "cli.devices_render.render_inventory",
     _call("edgeopt.cli.devices_render", "render_inventory")),
    ("devices-check", "terminal", "cli.devices_render.render_device_report",
     _call("edgeopt.cli.devices_render", "render_device_report")),
    ("devices-setup", "plain", "cli.devices_setup_cmd._render", _call("edgeopt.cli.devices_setup_cmd", "_render")),
    ("fleet-check", "plain", "cli.devices_render.render_check_rows",
     _call("edgeopt.cli.devices_render", "render_check_rows")),
    ("sweep", "html", "sweep.report.write_plot (pareto.svg)", _file(lambda r, t: _m("edgeopt.sweep.report").write_plot(
        r.levels, "latency", t / "pareto.svg", min_retention=0.99, fps=30.0, recommendation=r.recommendation),
        "pareto.svg")),
    ("llm-sweep", "html", "llm.sweep_rank.write_llm_plot (pareto.svg)", _file(lambda r, t: _m(
        "edgeopt.llm.sweep_rank").write_llm_plot(r.levels, t / "pareto.svg", 0.99, r.recommendation), "pareto.svg")),
    ("targets", "terminal", "cli.render.render_target", lambda r, t: _m("edgeopt.cli.render").render_target(r[0])),
    ("tradeoff", "terminal", "cli.bench_tradeoff_cmd.render_tradeoff",
     _call("edgeopt.cli.bench_tradeoff_cmd", "render_tradeoff")),
    ("tradeoff", "html", "reports.tradeoff_html.render_tradeoff_html", _file(lambda r, t: _m(
        "edgeopt.reports.tradeoff_html").render_tradeoff_html(r), "")),
    ("optimize", "terminal", "cli.optimize_render.render_optimize",
     _call("edgeopt.cli.optimize_render", "render_optimize")),
    ("llm-optimize", "plain", "llm.cli.optimize.render_llm_optimize",
     _call("edgeopt.llm.cli.optimize", "render_llm_optimize")),
    ("inspect", "terminal", "cli.render.render_inspect", _call("edgeopt.cli.render", "render_inspect")),
    ("targets", "terminal", "cli.render.render_targets", _call("edgeopt.cli.render", "render_targets")),
    ("bench-manifest", "terminal", "cli.bench_many.render_manifest", _manifest),
    *[(name, "json", "--json (cli.json_out.emit_json)", _emit_json) for name in KINDS],
]

_CONSOLE_MODULES = ("edgeopt.cli.render", "edgeopt.bench.llm.render", "edgeopt.cli.bench_kind_cmd",
                    "edgeopt.profile.render",
                    "edgeopt.cli.sweep_fleet", "edgeopt.llm.cli.fleet_sweep", "edgeopt.cli.qualify_render",
                    "edgeopt.cli.fleet_render", "edgeopt.cli.history_render", "edgeopt.cli.devices_render",
                    "edgeopt.cli.bench_tradeoff_cmd", "edgeopt.cli.optimize_render")


_TERMINAL: list[Console] = [Console()]  # the recording console of the running test (renderers that take one)


@pytest.fixture()
def terminal(monkeypatch: pytest.MonkeyPatch) -> Console:
    """Every console the renderers print to, made one recording terminal."""
    rec = _TERMINAL[0] = hk.recording_console()
    for name in _CONSOLE_MODULES:
        module = _m(name)
        for attr, value in list(vars(module).items()):
            if isinstance(value, Console):
                monkeypatch.setattr(module, attr, rec)
        if "Console" in vars(module):
            monkeypatch.setattr(module, "Console", lambda *a, **k: rec)
    return rec


_CHECK = {"terminal": hk.terminal_ok, "plain": hk.plain_ok, "html": hk.html_ok, "markdown": hk.markdown_ok,
          "xml": hk.xml_ok, "json": hk.json_ok}


@pytest.mark.parametrize("flag", [True, False], ids=["flags-on", "flags-off"])
@pytest.mark.parametrize(("kind", "syntax", "where", "render"), RENDERERS,
                         ids=[f"{k}-{s}-{w.split()[0]}" for k, s, w, _ in RENDERERS])
def test_every_renderer_shows_hostile_strings_as_text(kind, syntax, where, render, flag, terminal, capsys,
                                                      tmp_path):
    result = build(KINDS[kind], flag)
    assert hk.strings(result) >= 3, f"{kind}: the filler reached too few strings"
    text = render(result, tmp_path)
    text = text if isinstance(text, str) else None  # None: printed (an exit code is not output)
    printed = terminal.file.getvalue()  # type: ignore[attr-defined]
    captured = capsys.readouterr()
    if text is not None:
        _CHECK[syntax](text, where)
    if printed:
        hk.terminal_ok(printed, where)
    hk.plain_ok(captured.out if syntax != "json" else "", where)
    hk.plain_ok(captured.err, where)
    if syntax == "json" and text is None:
        hk.json_ok(captured.out, where)
    assert text or printed or captured.out, f"{where} showed nothing"


def test_every_renderer_is_walked():
    """A renderer module added later must be added here: every ``render_*`` function in edgeopt is listed."""
    import re
    root = Path(__file__).resolve().parents[2] / "edgeopt"
    listed = " ".join(w for _, _, w, _ in RENDERERS)
    missing = []
    for path in sorted(root.rglob("*.py")):
        for fn in re.findall(r"^def (render_\w+)\(", path.read_text(encoding="utf-8"), flags=re.M):
            if fn not in listed and fn not in _NOT_RESULTS:
                missing.append(f"{path.relative_to(root)}:{fn}")
    assert not missing, missing


# Renderers of things that are not results (the user's own recipe files), or parts of a listed page.
_NOT_RESULTS = {"render_recipes", "render_recipe", "render_html", "render_markdown", "render_junit",
                "render_json"}


def test_every_json_file_edgeopt_writes_goes_through_for_json():
    """A result file written from ``model_dump_json`` (sweep.json, fleet-sweep.json, profile.json, manifest.json,
    deployment.json, result.json, --json) keeps no C1 control or bidi override raw (edgeopt.untrusted.for_json)."""
    root = Path(__file__).resolve().parents[2] / "edgeopt"
    raw = []
    for path in sorted(root.rglob("*.py")):  # a document written out is indented; the history's rows are not
        text = path.read_text(encoding="utf-8")
        if text.count(".model_dump_json(indent=") > text.count("for_json("):
            raw.append(str(path.relative_to(root)))
    assert not raw, raw
