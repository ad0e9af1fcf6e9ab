"""The small interface every runtime implements: load a model, describe its tensors, bind inputs.

The harness owns timing; a runtime only loads and infers.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

from ..protocol import TensorInfo


class RuntimeMissing(RuntimeError):
    """The runtime's Python package is not importable here; the message names the package to install."""


class Runtime:
    """Base class of the agent's runtimes.

    Class attributes (read without loading the runtime's library):
        name: the registry name; the host's runtime descriptor of the same name must agree (a contract test).
        formats: model formats it loads, as the host names them (empty: not declared, e.g. ``null`` loads any).
        packages: (import name, distribution names) of the packages that provide it; ``probe`` reports them.
    """

    name = "base"
    formats: Tuple[str, ...] = ()
    packages: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()

    def version(self) -> str:
        raise NotImplementedError

    def load(self, model_path: str, options: Dict[str, Any], threads: int) -> None:
        """Load the model; this is the part timed as ``load_ms``."""
        raise NotImplementedError

    def inputs(self) -> List[TensorInfo]:
        raise NotImplementedError

    def outputs(self) -> List[TensorInfo]:
        raise NotImplementedError

    def bind(self, feeds: Dict[str, Any]) -> Callable[[], Any]:
        """Return a zero-argument callable that runs one inference on ``feeds``.

        Binding once keeps argument handling out of the timed loop.
        """
        raise NotImplementedError

    def details(self) -> Dict[str, Any]:
        """Extra facts for the result (e.g. the execution providers really used)."""
        return {}
