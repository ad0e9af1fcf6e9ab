"""``junit.xml``: one test case per gate per device, so CI systems show a qualification like a test run.

Suites are devices (``edgeopt.qualify.<spec>.<device>``), cases are gates (stable names: ``latency``, ``memory``,
...), a failed gate is a ``<failure>``, a device that could not run makes every gate an ``<error>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ..qualify.result import GateStatus, QualifyResult
from ..untrusted import clean_text


def _suite_name(result: QualifyResult, device: str) -> str:
    return f"edgeopt.qualify.{result.name}.{device}"


def _clean(root: ET.Element) -> None:
    """Every attribute and text made valid XML 1.0 (no raw 0x1B, no other control character): details and errors
    quote devices, which are untrusted (edgeopt.untrusted). ElementTree escapes ``<>&"`` itself."""
    for element in root.iter():
        element.attrib = {k: clean_text(v, limit=8000) for k, v in element.attrib.items()}
        if element.text:
            element.text = clean_text(element.text, limit=8000)


def render_junit(result: QualifyResult) -> str:
    """The JUnit XML document as a string."""
    gates = result.gate_results()
    root = ET.Element("testsuites", {
        "name": f"edgeopt qualify {result.name}",
        "tests": str(len(gates)),
        "failures": str(sum(g.status is GateStatus.FAIL for g in gates)),
        "errors": str(sum(g.status is GateStatus.ERROR for g in gates)),
        "time": f"{result.seconds:.3f}",
    })
    for d in result.devices:
        suite = ET.SubElement(root, "testsuite", {
            "name": _suite_name(result, d.label),
            "tests": str(len(d.gates)),
            "failures": str(sum(g.status is GateStatus.FAIL for g in d.gates)),
            "errors": str(sum(g.status is GateStatus.ERROR for g in d.gates)),
            "skipped": "0",
            "time": f"{d.bench.run.timed_s:.3f}" if d.bench else "0",  # an LLM device: its gates' rows alone
            "timestamp": result.started_at,
        })
        props = ET.SubElement(suite, "properties")
        facts = {"target": d.target, "runner": d.runner or "", "spec_sha256": result.spec_sha256,
                 "model_sha256": d.bench.model.sha256 if d.bench else result.model.qualified_sha256.get(d.target, ""),
                 "history_run_id": str(d.history_run_id or ""),
                 "target_mismatch": "; ".join(d.bench.target_mismatch) if d.bench else ""}
        for key, value in facts.items():
            ET.SubElement(props, "property", {"name": key, "value": value})
        for g in d.gates:
            case = ET.SubElement(suite, "testcase", {"classname": _suite_name(result, d.label), "name": g.gate,
                                                     "time": "0"})
            message = g.detail
            if g.status is GateStatus.FAIL:
                ET.SubElement(case, "failure", {"message": message, "type": "GateFailed"}).text = message
            elif g.status is GateStatus.ERROR:
                ET.SubElement(case, "error", {"message": message, "type": "DeviceError"}).text = d.error or message
            else:
                ET.SubElement(case, "system-out").text = message
    _clean(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
