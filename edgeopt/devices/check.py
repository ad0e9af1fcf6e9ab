"""``edgeopt devices check``: probe a device over SSH and say whether it can run benchmarks, and what to install.

The facts come from ``python -m edgeopt_agent probe --workdir W`` run on the device (the same agent a
benchmark uses); this module only interprets them against the device's target: which of the target's
runtimes are there, and for each missing one the package to install on that kind of board.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from ..enums import Arch, RuntimeName
from ..targets.schema import Target

if TYPE_CHECKING:
    from ..runners import Runner

# Python packages (import names, as the probe reports them) that provide each runtime.
RUNTIME_PACKAGES: dict[RuntimeName, tuple[str, ...]] = {
    RuntimeName.ONNXRUNTIME: ("onnxruntime",),
    RuntimeName.TFLITE: ("ai_edge_litert", "tflite_runtime"),
    RuntimeName.OPENVINO: ("openvino",),
    RuntimeName.TENSORRT: ("tensorrt",),
    RuntimeName.COREML: (),
    RuntimeName.NULL: (),
}


def _kind(target: Target | None) -> str:
    if target is None:
        return "generic"
    if target.accelerator.startswith("edgetpu"):
        return "coral"
    if target.name.startswith("jetson") or (target.arch is Arch.AARCH64 and target.accelerator.startswith("gpu")):
        return "jetson"
    return "generic"


def install_hint(runtime: RuntimeName, target: Target | None) -> str:
    """What to install on the device for ``runtime``, for the kind of board ``target`` is."""
    kind = _kind(target)
    if runtime is RuntimeName.ONNXRUNTIME:
        if kind == "jetson":
            return ("pip install the onnxruntime-gpu wheel matching your JetPack from the Jetson Zoo "
                    "(https://elinux.org/Jetson_Zoo#ONNX_Runtime); CPU only: pip install onnxruntime")
        return "pip install onnxruntime"
    if runtime is RuntimeName.TFLITE:
        if kind == "coral":
            return ("install the Edge TPU runtime and PyCoral from Coral's apt repository: "
                    "apt-get install libedgetpu1-std python3-pycoral (brings tflite-runtime)")
        return "pip install ai-edge-litert (or tflite-runtime on Python < 3.9)"
    if runtime is RuntimeName.TENSORRT:
        return ("TensorRT comes with JetPack: apt-get install python3-libnvinfer (a venv needs "
                "--system-site-packages), plus pip install cuda-python; "
                "on x86 with an NVIDIA GPU: pip install tensorrt")
    if runtime is RuntimeName.OPENVINO:
        return "pip install openvino"
    if runtime is RuntimeName.COREML:
        return "Core ML runs on macOS only: pip install coremltools on a Mac"
    return "built into the agent"


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
    problems: list[str] = Field(default_factory=list, description="One line per missing piece, with the fix.")
    agent_version: str = Field(description="Version of the agent that ran the probe.")
    arch: str = Field(description="Machine architecture (uname -m).")
    os: str = Field(description="Kernel name and release.")
    hostname: str | None = Field(None, description="The device's host name.")
    python: str = Field(description="Python version of the interpreter used.")
    python_executable: str = Field(description="The interpreter used.")
    packages: dict[str, str | None] = Field(description="numpy and runtime packages: version, or null if missing.")
    runtimes: list[RuntimeStatus] = Field(description="The target's runtimes in order of preference.")
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
        from_agent = agent_rts.get(rt.value) or {}
        if from_agent:
            available, version = bool(from_agent.get("available")), from_agent.get("version")
        else:  # an agent without this runtime registered: judge by the package alone
            found = [p for p in RUNTIME_PACKAGES[rt] if pkgs.get(p)]
            available, version = bool(found), pkgs.get(found[0]) if found else None
        hint = None if available else install_hint(rt, target)
        if hint:
            problems.append(f"{rt.value} missing: {hint}")
        statuses.append(RuntimeStatus(runtime=rt, available=available, version=version, install=hint))
    if _kind(target) == "coral" and not pkgs.get("pycoral"):
        problems.append(f"pycoral missing (Edge TPU delegate): {install_hint(RuntimeName.TFLITE, target)}")
    usable = any(s.available for s in statuses if s.runtime is not RuntimeName.NULL)
    disk = facts.get("disk") or {}
    free = disk.get("free_bytes")
    return DeviceReport(
        device=device, runner=runner, target=target.name if target is not None else None,
        ready=bool(pkgs.get("numpy")) and usable, problems=problems,
        agent_version=str(facts.get("agent_version", "?")), arch=str(env.get("machine", "?")),
        os=str(env.get("os", "?")), hostname=env.get("hostname"), python=str(env.get("python", "?")),
        python_executable=str(env.get("python_executable", "?")), packages=pkgs, runtimes=statuses,
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
