"""The registry of device targets: built-in YAML files plus the user's directories, one name per target.

Built-in targets come from the repository's ``targets/`` directory (editable install) or, in an installed
wheel, from the ``edgeopt_targets_data`` package. Third-party packages add directories through the
``edgeopt.targets`` entry-point group; users add them with ``--targets-dir`` or ``EDGEOPT_TARGETS_DIR``.
A name defined twice is an error, so a user target never silently shadows a built-in one.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, Sequence
from importlib import metadata  # noqa: F401 - tests patch metadata.entry_points
from pathlib import Path

from ..config import Settings, from_environment
from ..errors import TargetError
from ..registry import plugins
from ..resources import REPO_ROOT, builtin_dir
from .detect import detect_local
from .loader import TARGET_SUFFIXES, load_target_file
from .schema import Target

REPO_TARGETS_DIR = REPO_ROOT / "targets"
ENTRY_POINT_GROUP = "edgeopt.targets"
_ADD_HINT = "add one with --targets-dir DIR or EDGEOPT_TARGETS_DIR"


class TargetRegistry:
    """Every known target by name, with the file each came from.

    ``detect: true`` targets are returned filled from this machine (detected once per registry).
    """

    def __init__(
        self,
        targets: dict[str, tuple[Target, Path]],
        detector: Callable[[Target], Target] = detect_local,
    ) -> None:
        """Wrap already-loaded targets; use :func:`load_registry` to build one from directories.

        Args:
            targets: target and source file by name.
            detector: fills a ``detect: true`` target from the machine.
        """
        self._targets = dict(sorted(targets.items()))
        self._detector = detector
        self._detected: dict[str, Target] = {}

    def names(self) -> list[str]:
        """All target names, sorted."""
        return list(self._targets)

    def get(self, name: str) -> Target:
        """The target called ``name``; a ``detect: true`` target comes back detected.

        Raises:
            TargetError: no such target (the message lists the known ones and the closest match), or
                detection failed.
        """
        if name not in self._targets:
            close = difflib.get_close_matches(name, self._targets, n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise TargetError(
                f"unknown target '{name}'{hint}; known targets: {', '.join(self._targets) or '(none)'}; "
                f"{_ADD_HINT}"
            )
        target = self._targets[name][0]
        if not target.detect:
            return target
        if name not in self._detected:
            self._detected[name] = self._detector(target)
        return self._detected[name]

    def all(self) -> list[Target]:
        """Every target in name order, ``detect: true`` ones detected."""
        return [self.get(name) for name in self._targets]

    def path(self, name: str) -> Path:
        """The YAML file target ``name`` was loaded from.

        Raises:
            TargetError: no such target.
        """
        if name not in self._targets:
            self.get(name)  # raises the unknown-target error with its suggestion
        return self._targets[name][1]

    def __contains__(self, name: object) -> bool:
        return name in self._targets

    def __iter__(self) -> Iterator[str]:
        return iter(self._targets)

    def __len__(self) -> int:
        return len(self._targets)


def load_registry(extra_dirs: Sequence[Path] = (), settings: Settings | None = None) -> TargetRegistry:
    """Load the built-in targets plus those in the user's directories.

    Args:
        extra_dirs: directories given on the command line (``--targets-dir``); each must exist.
        settings: environment settings whose ``targets_dirs`` are added; default: read from the environment
            through :func:`edgeopt.config.from_environment`.

    Returns:
        The registry.

    Raises:
        TargetError: a directory is missing, a file is invalid, or a name is defined twice.
    """
    settings = from_environment() if settings is None else settings
    dirs = [*builtin_dirs(), *_entry_point_dirs(), *settings.targets_dirs, *extra_dirs]
    found: dict[str, tuple[Target, Path]] = {}
    for directory in _unique(dirs):
        for path in _target_files(directory):
            target = load_target_file(path)
            if target.name in found:
                raise TargetError(
                    f"target '{target.name}' is defined twice: {found[target.name][1]} and {path}; "
                    "rename one of them (a user target may not shadow a built-in one)"
                )
            found[target.name] = (target, path)
    return TargetRegistry(found)


def builtin_dirs() -> list[Path]:
    """The directory of the shipped target files: the repository's ``targets/`` or ``<prefix>/share/edgeopt``.

    Raises:
        TargetError: neither exists (a broken install).
    """
    found = builtin_dir("targets")
    if found is None:
        raise TargetError(
            f"built-in targets not found (looked in {REPO_TARGETS_DIR} and <prefix>/share/edgeopt/targets): "
            "reinstall edgeopt"
        )
    return [found]


def _entry_point_dirs() -> list[Path]:
    """Directories registered by installed packages: each entry point is a function returning a path."""
    dirs = []
    for entry in plugins.entry_points(ENTRY_POINT_GROUP):
        try:
            dirs.append(Path(entry.load()()))
        except Exception as exc:  # a broken plug-in must name itself, whatever it raised
            raise TargetError(
                f"entry point '{entry.name} = {entry.value}' in group {ENTRY_POINT_GROUP} failed: "
                f"{type(exc).__name__}: {exc}; fix or uninstall the package that provides it"
            ) from exc
    return dirs


def _unique(dirs: Sequence[Path]) -> list[Path]:
    """Drop repeats (the same directory from the environment and the command line is not a duplicate)."""
    seen: set[Path] = set()
    out = []
    for directory in dirs:
        key = directory.expanduser().resolve()
        if key not in seen:
            seen.add(key)
            out.append(directory)
    return out


def _target_files(directory: Path) -> list[Path]:
    if not directory.exists():
        raise TargetError(
            f"targets directory not found: {directory}; create it or fix --targets-dir / EDGEOPT_TARGETS_DIR"
        )
    if not directory.is_dir():
        raise TargetError(
            f"targets directory is not a directory: {directory}; pass the folder holding <name>.yaml files"
        )
    return sorted(
        p
        for p in directory.iterdir()
        if p.suffix in TARGET_SUFFIXES and not p.name.startswith(".") and p.is_file()
    )
