"""``junit.xml`` of a fleet benchmark: one test suite per device, one test case per device x gate.

Gates of a benchmark: ``run`` (the device ran and the run is valid) and ``fps_budget`` (when a budget was
checked). A device that could not run makes each of its cases an ``<error>``, so CI shows a dead board as
errored, not as failed.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ...fleet.result import FleetResult, FleetRow
from ...fleet.verdict import budget_text
from ...untrusted import clean_text


def _cases(row: FleetRow) -> list[tuple[str, str, str]]:
    """``(gate, status, message)`` with status ``pass``, ``fail`` or ``error``."""
    if row.status == "error" or row.result is None:
        message = f"{row.error_kind}: {row.error}"
        return [("run", "error", message), ("fps_budget", "error", message)]
    r = row.result
    run = ("run", "pass" if r.valid else "fail",
           "valid run" if r.valid else "invalid run: " + "; ".join(r.invalid_reasons))
    cases = [run]
    if r.fps_budget is not None:
        b = r.fps_budget
        cases.append(("fps_budget", "pass" if b.passed else "fail", budget_text(b)))
    return cases


def render_fleet_junit(result: FleetResult) -> str:
    """The JUnit XML document as a string."""
    per_row = [(row, _cases(row)) for row in result.rows]
    every = [c for _, cases in per_row for c in cases]
    root = ET.Element("testsuites", {
        "name": f"edgeopt fleet bench {result.model}", "tests": str(len(every)),
        "failures": str(sum(s == "fail" for _, s, _ in every)), "errors": str(sum(s == "error" for _, s, _ in every)),
        "time": f"{result.seconds:.3f}",
    })
    for row, cases in per_row:
        name = f"edgeopt.fleet.{row.device}"
        suite = ET.SubElement(root, "testsuite", {
            "name": name, "tests": str(len(cases)), "failures": str(sum(s == "fail" for _, s, _ in cases)),
            "errors": str(sum(s == "error" for _, s, _ in cases)), "skipped": "0", "time": f"{row.seconds:.3f}",
            "timestamp": row.started_at or result.started_at,
        })
        props = ET.SubElement(suite, "properties")
        for key, value in {"target": row.target, "runner": row.runner, "fleet_id": result.fleet_id,
                           "model_sha256": result.model_sha256,
                           "history_run_id": str(row.history_run_id or "")}.items():
            ET.SubElement(props, "property", {"name": key, "value": value})
        for warning in row.warnings:  # target mismatch, invalid run, the agent's warnings
            ET.SubElement(props, "property", {"name": "warning", "value": warning})
        for gate, status, message in cases:
            case = ET.SubElement(suite, "testcase", {"classname": name, "name": gate, "time": "0"})
            if status == "fail":
                ET.SubElement(case, "failure", {"message": message, "type": "GateFailed"}).text = message
            elif status == "error":
                ET.SubElement(case, "error", {"message": message, "type": "DeviceError"}).text = message
            else:
                ET.SubElement(case, "system-out").text = message
    for element in root.iter():  # device names, errors and warnings are data: XML 1.0 text, no escapes
        element.attrib = {k: clean_text(v) for k, v in element.attrib.items()}
        element.text = clean_text(element.text) if element.text else element.text
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
