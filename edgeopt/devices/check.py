"""``edgeopt devices check``: probe a device over SSH and say whether it can run benchmarks, and what to install.

The facts come from ``python -m edgeopt_agent probe --workdir W`` run on the device (the same agent a
benchmark uses); this module only interprets them against the device's target: which of the target's
runtimes are there, and for each missing one the package to install on that kind of board.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from ..metrics.target_match import target_mismatch
from ..names import RuntimeName
from ..registry import get_runtime, kind_registry, runtimes_of_kind
from ..targets.schema import Target

if TYPE_CHECKING:
    from ..runners import Runner


def install_hint(runtime: RuntimeName, target: Target | None) -> str:
    """What to install on the device for ``runtime``, for the kind of board ``target`` is (its descriptor's
    install hints, matched on the target's accelerator kind and arch)."""
    return get_runtime(runtime).install_hint(target)


class RuntimeStatus(BaseModel):
    """One runtime the target wants, as found on the device."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    runtime: RuntimeName = Field(description="Runtime name.")
    available: bool = Field(description="The agent can load it on the device.")
    version: str | None = Field(None, description="Its version there.")
    install: str | None = Field(None, description="What to install on the device when it is missing.")


class DeviceReport(BaseModel):
    """What ``edgeopt devices check`` found on a device."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    device: str = Field(description="Inventory name, or user@host:port.")
    runner: str = Field(description="ssh:user@host:port.")
    target: str | None = Field(None, description="The device's target, whose runtimes were checked.")
    ready: bool = Field(description="numpy and at least one of the target's runtimes are there.")
    runtime: RuntimeName | None = Field(
        None, description="The runtime a benchmark without --runtime uses there: the target's first that the "
                          "device has (null: none, not ready).")
    summary: str = Field("", description="One line: 'ready with onnxruntime; tensorrt missing (install: ...)'.")
    target_mismatch: list[str] = Field(
        default_factory=list, description="Why the device is not the target's hardware (arch, CPU vendor, cores, "
                                          "accelerator), as a benchmark there would report it; empty when it matches.")
    problems: list[str] = Field(default_factory=list, description="One line per missing piece, with the fix.")
    agent_version: str = Field(description="Version of the agent that ran the probe.")
    arch: str = Field(description="Machine architecture (uname -m).")
    os: str = Field(description="Kernel name and release.")
    hostname: str | None = Field(None, description="The device's host name.")
    python: str = Field(description="Python version of the interpreter used.")
    python_executable: str = Field(description="The interpreter used.")
    packages: dict[str, str | None] = Field(description="numpy and runtime packages: version, or null if missing.")
    runtimes: list[RuntimeStatus] = Field(description="The target's runtimes in order of preference.")
    other_kinds: dict[str, list[RuntimeStatus]] = Field(
        default_factory=dict, description="Per model kind the target's list does not cover (generative: LLM "
                                          "folders), the runtimes of that kind as found on the device.")
    memory_total_mb: float | None = Field(None, description="Total memory, MiB.")
    memory_available_mb: float | None = Field(None, description="Available memory (MemAvailable), MiB.")
    workdir: str = Field(description="The agent's directory on the device (absolute).")
    disk_free_mb: float | None = Field(None, description="Free space on the file system of the workdir, MiB.")
    cpu: str | None = Field(None, description="CPU model.")
    cores: int | None = Field(None, description="Logical CPUs.")
    governor: str | None = Field(None, description="cpufreq scaling governor of cpu0 (performance is steadiest).")
    temperature_c: dict[str, float] = Field(default_factory=dict, description="Thermal zones, degrees Celsius.")
    power_sensors: list[str] = Field(default_factory=list, description="Power sensors present (kind: detail).")


def _sensor_text(sensor: dict[str, Any]) -> str:
    kind = str(sensor.get("kind", "?"))
    if sensor.get("rails"):
        return f"{kind}: {sensor.get('name') or sensor.get('path')} ({', '.join(sensor['rails'])})"
    return f"{kind}: {sensor.get('path', '')}"


def _extra_package_problems(wanted: list[RuntimeName], pkgs: dict[str, Any], target: Target | None) -> list[str]:
    """Packages a wanted runtime needs on this target's accelerator (the Edge TPU delegate) that are missing."""
    if target is None:
        return []
    problems = []
    for rt in wanted:
        desc = get_runtime(rt)
        for extra in desc.extra_packages:
            if extra.accelerator is target.accelerator_kind and not pkgs.get(extra.package):
                problems.append(f"{extra.package} missing ({extra.purpose}): {desc.install_hint(target)}")
    return problems


def readiness(ready: bool, chosen: RuntimeName | None, statuses: list[RuntimeStatus], numpy: bool) -> str:
    """``ready with onnxruntime; tensorrt missing (install: ...)``: ready names the runtime a benchmark will use,
    so "ready" never hides that the target's first choice is absent."""
    missing = [f"{s.runtime.value} missing (install: {s.install})" for s in statuses
               if not s.available and get_runtime(s.runtime).auto_select]
    if ready and chosen is not None:
        return "; ".join([f"ready with {chosen.value}", *missing])
    reasons = ([] if numpy else ["numpy missing"]) + (missing or ["no runtime of the target is there"])
    return "NOT READY: " + "; ".join(reasons)


def _status(rt: RuntimeName, agent_rts: dict[str, Any], pkgs: dict[str, Any], target: Target | None
            ) -> RuntimeStatus:
    """How ``rt`` is on the device: the agent's own answer, else its packages alone (an older agent)."""
    from_agent = agent_rts.get(rt.value) or {}
    if from_agent:
        available, version = bool(from_agent.get("available")), from_agent.get("version")
    else:  # an agent without this runtime registered: judge by the package alone
        found = [p for p in get_runtime(rt).packages if pkgs.get(p)]
        available, version = bool(found), pkgs.get(found[0]) if found else None
    return RuntimeStatus(runtime=rt, available=available, version=version,
                         install=None if available else install_hint(rt, target))


def _kinds_summary(kinds: dict[str, list[RuntimeStatus]]) -> str:
    """``; generative: onnxruntime_genai ready, openvino_genai missing`` for the kinds the target does not list."""
    parts = [f"{kind}: " + ", ".join(f"{s.runtime.value} {'ready' if s.available else 'missing'}" for s in found)
             for kind, found in kinds.items()]
    return "".join(f"; {p}" for p in parts)


def build_report(facts: dict[str, Any], *, device: str, runner: str, target: Target | None) -> DeviceReport:
    """Interpret the probe's facts for ``target`` (None: only onnxruntime is expected)."""
    env = facts.get("environment") or {}
    pkgs = {name: (info or {}).get("version") for name, info in (facts.get("packages") or {}).items()}
    agent_rts = facts.get("runtimes") or {}
    wanted = list(target.runtimes) if target is not None else [RuntimeName.ONNXRUNTIME]
    statuses, problems = [], []
    if not pkgs.get("numpy"):
        problems.append("numpy missing: apt-get install python3-numpy (or pip install numpy); the agent needs it")
    for rt in wanted:
        status = _status(rt, agent_rts, pkgs, target)
        if status.install:
            problems.append(f"{rt.value} missing: {status.install}")
        statuses.append(status)
    problems += _extra_package_problems(wanted, pkgs, target)
    kinds = {k: [_status(RuntimeName(r.name), agent_rts, pkgs, target) for r in runtimes_of_kind(k)]
             for k in kind_registry().names() if not any(get_runtime(rt).serves(k) for rt in wanted)}
    kinds = {k: v for k, v in kinds.items() if v}
    chosen = next((s.runtime for s in statuses if s.available and get_runtime(s.runtime).auto_select), None)
    ready = bool(pkgs.get("numpy")) and chosen is not None
    disk = facts.get("disk") or {}
    free = disk.get("free_bytes")
    return DeviceReport(
        device=device, runner=runner, target=target.name if target is not None else None,
        ready=ready, runtime=chosen if ready else None,
        summary=readiness(ready, chosen, statuses, bool(pkgs.get("numpy"))) + _kinds_summary(kinds),
        target_mismatch=target_mismatch(target, env) if target is not None else [], problems=problems,
        agent_version=str(facts.get("agent_version", "?")), arch=str(env.get("machine", "?")),
        os=str(env.get("os", "?")), hostname=env.get("hostname"), python=str(env.get("python", "?")),
        python_executable=str(env.get("python_executable", "?")), packages=pkgs, runtimes=statuses, other_kinds=kinds,
        memory_total_mb=env.get("memory_total_mb"), memory_available_mb=facts.get("memory_available_mb"),
        workdir=str(facts.get("workdir") or disk.get("workdir") or "?"),
        disk_free_mb=round(free / 2**20, 1) if isinstance(free, (int, float)) else None,
        cpu=env.get("cpu"), cores=env.get("cores"), governor=env.get("governor"),
        temperature_c=env.get("temperature_c") or {},
        power_sensors=[_sensor_text(s) for s in facts.get("power_sensors") or []],
    )


def check_device(runner: Runner, *, device: str, target: Target | None) -> DeviceReport:
    """Probe the device behind ``runner`` (pushing the agent first) and report on it.

    Raises:
        RunnerError: the device cannot be reached or the probe failed (exit code 3).
    """
    return build_report(runner.probe(), device=device, runner=runner.name, target=target)
