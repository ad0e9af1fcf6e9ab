"""``edgeopt devices setup``: make a freshly flashed board able to run the agent, without touching system Python.

Steps on one device: probe it (the agent's own ``probe``, with the system interpreter: arch, Python, packages)
-> read setup facts (glibc, venv/ensurepip, an existing venv) -> create ``<workdir>/venv``
(``--system-site-packages``) unless a working one is there -> find what is missing in the venv (numpy and the
target's pip-installable runtimes) -> install it with the device's pip when it reaches a package index, else
offline: the host downloads wheels for the device's platform (or takes ``--wheels DIR``), pushes the missing
ones over SFTP, and pip installs them with ``--no-index`` -> probe again with the venv's interpreter -> record
it on the device (``setup.json``) and beside the inventory (``devices.state.json``), so later runs use it
without ``--python``. Vendor-only runtimes are named with their command, never attempted.

Idempotent: a second run finds everything in place, changes nothing and says so. Resumable: a run stopped
half way reuses the venv and the wheels already pushed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field

from ..._version import __version__
from ...config import from_environment
from ...errors import RunnerError
from ...names import RuntimeName
from ...runners.ssh import SshRunner
from ...runners.ssh_cache import DEFAULT_LIMIT_BYTES
from ...runners.ssh_session import SshSession, SshTimeouts
from ...targets import load_registry
from ..provisioned import SetupRecord, now_iso, read_state, state_path, write_record
from ..schema import Device
from .built_wheels import BUILT, BuildTarget, cached_wheel, install_compiled, requires
from .packages import NUMPY, RuntimeInstall, install_plan
from .remote import DeviceShell
from .wheels import cache_dir, download, local_wheels


class SetupReport(BaseModel):
    """What setup found and did on one device."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    device: str = Field(description="Inventory name.")
    arch: str = Field(description="Machine architecture (uname -m).")
    base_python: str = Field(description="The system interpreter the venv was made from (never modified).")
    python: str = Field(description="The venv interpreter later runs use.")
    python_version: str = Field(description="Python version on the device.")
    mode: str = Field(description="How packages were installed this time: online, offline, or none (nothing to do).")
    changed: bool = Field(description="False when everything was already in place.")
    actions: list[str] = Field(description="What was done, in order.")
    packages: dict[str, str | None] = Field(description="numpy and runtime packages in the venv afterwards.")
    runtimes: dict[str, bool] = Field(description="Each wanted runtime: can the agent load it now.")
    vendor: dict[str, str] = Field(description="Vendor-only runtimes still missing: the command to run by hand.")
    device_state: str = Field(description="setup.json on the device.")
    state_file: str | None = Field(default=None, description="The sidecar beside the inventory that records the venv.")
    message: str = Field(description="One-line summary.")

    @property
    def ready(self) -> bool:
        return bool(self.packages.get(NUMPY)) and not self.vendor and all(self.runtimes.values())

    @computed_field  # type: ignore[prop-decorator]
    @property
    def summary(self) -> str:
        """``ready with onnxruntime; tensorrt missing (vendor-only: ...)``: the runtime a benchmark will use (the
        target's first one the device can load), so a device is never called ready for a runtime it lacks."""
        usable = [name for name, ok in self.runtimes.items() if ok]
        missing = [f"{name} missing" + (f" (vendor-only: {self.vendor[name]})" if name in self.vendor else "")
                   for name, ok in self.runtimes.items() if not ok]
        if not self.packages.get(NUMPY) or not usable:
            reasons = [] if self.packages.get(NUMPY) else ["numpy missing"]
            reasons += missing or ([] if usable else ["no runtime of the target is there"])
            return "NOT READY: " + "; ".join(reasons)
        return "; ".join([f"ready with {usable[0]}", *missing])


@dataclass
class _Plan:
    wanted: list[RuntimeInstall]
    actions: list[str] = field(default_factory=list)
    mode: str = "none"


def _version(text: str) -> tuple[int, int]:
    parts = [int(p) for p in str(text).split(".")[:2] if p.isdigit()]
    return (parts[0], parts[1]) if len(parts) == 2 else (0, 0)


def _missing(plan: _Plan, facts: dict[str, Any]) -> list[str]:
    """Pip requirements still needed in the venv according to its probe."""
    pkgs = {k: (v or {}).get("version") for k, v in (facts.get("packages") or {}).items()}
    agent_rts = facts.get("runtimes") or {}
    need = [] if pkgs.get(NUMPY) else [NUMPY]
    for item in plan.wanted:
        if item.requirements and not (agent_rts.get(item.runtime.value) or {}).get("available"):
            need += [r for r in item.requirements if r not in need]
    return need


def setup_device(
    device: Device,
    *,
    inventory: Path,
    known_hosts: Path | None = None,
    accept_new_host_key: bool = False,
    timeouts: SshTimeouts | None = None,
    cache_limit_bytes: int = DEFAULT_LIMIT_BYTES,
    runtimes: Sequence[RuntimeName] | None = None,
    offline: bool = False,
    wheels: Path | None = None,
    wheels_cache: Path | None = None,
    targets_dirs: Sequence[Path] = (),
    log: Callable[[str], None] | None = None,
) -> SetupReport:
    """Provision one inventory device (see the module docstring for the steps).

    Args:
        device: the inventory device as written in the file (its ``python`` is the venv's base interpreter:
            load the inventory with ``setup_state=False``).
        inventory: the inventory file; the venv is recorded in its ``<stem>.state.json`` sidecar.
        known_hosts, accept_new_host_key, timeouts: as for any SSH run (``--ssh-timeout``).
        cache_limit_bytes: size limit of the device's cache, where the agent is pushed (``--device-cache-mb``).
        runtimes: runtimes to install (None: the device target's runtimes).
        offline: never let the device reach an index: the host supplies the wheels.
        wheels: a directory of wheels to push instead of downloading (implies offline).
        wheels_cache: where the host keeps downloaded wheels (default ``$XDG_CACHE_HOME/edgeopt/wheels``).
        targets_dirs: extra target directories.
        log: receives one line per step.

    Raises:
        InputError: unknown target or runtime, unsupported platform for offline wheels, bad wheel directory.
        RunnerError: unreachable device, no usable Python 3.8+ / venv there, or an install that failed.
    """
    say = log or (lambda message: None)
    target = load_registry(extra_dirs=targets_dirs).get(device.target)
    address = device.address()
    remote: dict[str, Any] = {"known_hosts": known_hosts, "accept_new_host_key": accept_new_host_key,
                              "timeouts": timeouts}
    facts = SshRunner(address, cache_limit_bytes=cache_limit_bytes, **remote).probe()
    env = facts.get("environment") or {}
    version, arch, workdir = _version(env.get("python", "")), str(env.get("machine", "?")), str(facts["workdir"])
    wanted = list(runtimes) if runtimes is not None else list(target.runtimes)
    plan = _Plan([install_plan(r, target=target, arch=arch, python=version) for r in wanted])
    with SshSession(address, **remote) as session:
        shell = DeviceShell(session, address.python, workdir)
        extra = shell.facts()
        _ensure_venv(shell, extra, plan, say)
        venv_runner = SshRunner(address.model_copy(update={"python": shell.venv_python}),
                                cache_limit_bytes=cache_limit_bytes, **remote)
        need = _missing(plan, venv_runner.probe())
        if need:
            build = BuildTarget.of(version, env, list(extra.get("libc") or []),
                                   [kv for i in plan.wanted if i.compiles for kv in i.build_env])
            _install(shell, need, extra, plan, offline=offline or wheels is not None, wheels=wheels,
                     wheels_cache=wheels_cache, python=version, say=say, build=build, device=device.name)
        final = venv_runner.probe()
        still = _missing(plan, final)
        if still:
            raise RunnerError(f"{device.name}: {', '.join(still)} still not importable by {shell.venv_python} after "
                              f"pip install; see the device's pip output above or install them by hand")
        return _finish(device, shell, final, plan, inventory, arch, env)


def _ensure_venv(shell: DeviceShell, extra: dict[str, Any], plan: _Plan, say: Callable[[str], None]) -> None:
    if extra.get("venv_exists") and shell.venv_works():
        return
    if not extra.get("venv_module"):
        raise RunnerError(f"{shell.base_python} on {shell.s.where} has no venv module: sudo apt-get install "
                          "python3-venv, then run setup again")
    say(f"creating {shell.venv} (--system-site-packages)")
    shell.create_venv(with_pip=bool(extra.get("ensurepip")))
    plan.actions.append(f"created venv {shell.venv} from {shell.base_python}")


def _install(shell: DeviceShell, need: list[str], extra: dict[str, Any], plan: _Plan, *, offline: bool,
             wheels: Path | None, wheels_cache: Path | None, python: tuple[int, int], say: Callable[[str], None],
             build: BuildTarget, device: str) -> None:
    """Install ``need`` into the venv: online with the device's pip when it reaches an index, else offline from
    wheels the host pushes; source-only requirements through the host's built-wheel cache (:mod:`.built_wheels`)."""
    root = wheels_cache or from_environment().wheels_dir or Path.home() / ".cache" / "edgeopt" / "wheels"
    compiled = [r for item in plan.wanted if item.compiles for r in item.requirements if r in need]
    plain = [r for r in need if r not in compiled]
    has_pip = shell.has_pip()
    online = not offline and has_pip and _online(shell, plain, plan, say)
    if online:
        plan.mode = "online"
    elif plain or compiled:
        cached = [w for r in compiled if (w := cached_wheel(root / BUILT / build.key, r)) is not None]
        deps = [d for w in cached for d in requires(w)]
        _offline(shell, plain, deps, extra, plan, has_pip=has_pip, wheels=wheels, root=root, python=python, say=say)
    if compiled:
        plan.actions += install_compiled(shell, compiled, build, root, device=device, offline=not online, say=say)


def _online(shell: DeviceShell, plain: list[str], plan: _Plan, say: Callable[[str], None]) -> bool:
    """Install ``plain`` with the device's own pip; False when it cannot reach an index or pip fails (offline)."""
    if not shell.index_reachable():
        say("the device's pip cannot reach a package index: offline (the host downloads the wheels)")
        return False
    if not plain:
        return True
    say(f"pip install {' '.join(plain)} on the device")
    try:
        shell.pip_install(plain, offline=False)
    except RunnerError as exc:
        say(f"the device's pip failed ({exc}); falling back to offline")
        return False
    plan.actions.append(f"installed {' '.join(plain)} with the device's pip")
    return True


def _offline(shell: DeviceShell, plain: list[str], deps: list[str], extra: dict[str, Any], plan: _Plan, *,
             has_pip: bool, wheels: Path | None, root: Path, python: tuple[int, int],
             say: Callable[[str], None]) -> None:
    """Push wheels for ``plain`` and ``deps`` (a built wheel's dependencies), then install ``plain`` --no-index."""
    plan.mode = "offline"
    if wheels is None and not plain and not deps and has_pip:
        return  # only a source-only runtime, with nothing else to fetch
    if wheels is not None:
        files = local_wheels(wheels)
    else:
        libc = list(extra.get("libc") or [])
        dest = cache_dir(root, python=python, arch=str(extra.get("machine")), libc=libc)
        say(f"downloading wheels for cp{python[0]}{python[1]} {extra.get('machine')} into {dest}")
        files = download([*plain, *deps, *([] if has_pip else ["pip"])], dest, python=python,
                         arch=str(extra.get("machine")), libc=libc)
    pushed = shell.push_wheels(files)
    plan.actions.append(f"pushed {pushed} of {len(files)} wheels to {shell.wheels}")
    pip_wheel = None if has_pip else shell.remote_wheel("pip-")
    if not has_pip and pip_wheel is None:
        raise RunnerError(f"the venv on {shell.s.where} has no pip and no pip wheel was pushed: add a pip wheel to "
                          "--wheels (pip download pip) or install python3-venv there")
    if plain:
        say(f"pip install --no-index {' '.join(plain)} on the device")
        shell.pip_install(plain, offline=True, pip_wheel=pip_wheel)
        plan.actions.append(f"installed {' '.join(plain)} from the pushed wheels (--no-index)")


def _finish(device: Device, shell: DeviceShell, final: dict[str, Any], plan: _Plan, inventory: Path, arch: str,
            env: dict[str, Any]) -> SetupReport:
    pkgs = {k: (v or {}).get("version") for k, v in (final.get("packages") or {}).items()}
    agent_rts = final.get("runtimes") or {}
    loadable = {i.runtime.value: bool((agent_rts.get(i.runtime.value) or {}).get("available")) for i in plan.wanted
                if i.runtime is not RuntimeName.NULL}
    vendor = {i.runtime.value: i.vendor for i in plan.wanted if i.vendor and not loadable.get(i.runtime.value)}
    a = device
    record = SetupRecord(user=a.user, host=a.host, port=a.port, workdir=a.workdir, python=shell.venv_python,
                         base_python=a.python, python_version=str(env.get("python", "?")), arch=arch,
                         packages={k: v for k, v in pkgs.items() if v}, updated_at=now_iso())
    old_device = shell.read_state() or {}
    mode = plan.mode if plan.mode != "none" else old_device.get("mode", "none")  # how it was installed last
    state_data = {**record.model_dump(exclude={"updated_at"}), "edgeopt_version": __version__,
                  "runtimes": loadable, "mode": mode}
    if {k: v for k, v in old_device.items() if k != "updated_at"} != state_data:
        shell.write_state({**state_data, "updated_at": record.updated_at})
        plan.actions.append(f"wrote {shell.workdir}/setup.json")
    old = read_state(state_path(inventory)).devices.get(device.name)
    if old is None or old.model_dump(exclude={"updated_at"}) != record.model_dump(exclude={"updated_at"}):
        write_record(inventory, device.name, record)
        plan.actions.append(f"recorded {shell.venv_python} for {device.name} in {state_path(inventory)}")
    changed = bool(plan.actions)
    message = ("already provisioned: nothing changed" if not changed else
               f"provisioned: later runs use {shell.venv_python} (no --python needed)")
    if vendor:
        message += f"; install by hand: {'; '.join(f'{k}: {v}' for k, v in vendor.items())}"
    return SetupReport(device=device.name, arch=arch, base_python=a.python, python=shell.venv_python,
                       python_version=str(env.get("python", "?")), mode=plan.mode, changed=changed,
                       actions=plan.actions, packages=pkgs, runtimes=loadable, vendor=vendor,
                       device_state=f"{shell.workdir}/setup.json", state_file=str(state_path(inventory)),
                       message=message)
