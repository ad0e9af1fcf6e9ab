"""Core ML runs only on macOS: elsewhere the runtime says so instead of failing later."""

from __future__ import annotations

import platform

import pytest

from edgeopt_agent import runtimes
from edgeopt_agent.harness import run
from edgeopt_agent.protocol import ERROR_RUNTIME_MISSING, Request


@pytest.mark.skipif(platform.system() == "Darwin", reason="on macOS Core ML exists; the contract test covers it")
def test_off_macos_coreml_is_missing_with_the_reason(tmp_path):
    with pytest.raises(runtimes.RuntimeMissing, match="Core ML prediction exists only on macOS"):
        runtimes.create("coreml")
    raw = run(Request(model_path=str(tmp_path / "m.mlpackage"), runtime="coreml"), lambda e: None)
    assert not raw.ok and raw.error_kind == ERROR_RUNTIME_MISSING and "--host" in raw.error
