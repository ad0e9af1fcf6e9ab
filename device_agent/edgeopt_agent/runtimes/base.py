"""The small interface every runtime implements: load a model, describe its tensors, bind inputs.

The harness owns timing; a runtime only loads and infers.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from ..protocol import TensorInfo


class RuntimeMissing(RuntimeError):
    """The runtime's Python package is not importable here; the message names the package to install."""


class Runtime:
    """Base class of the agent's runtimes."""

    name = "base"
    #: The run's input shapes by name and the batch for a dynamic leading dim, told by the harness before
    #: ``load`` (:meth:`expect_inputs`); None: not known.
    run_shapes: Optional[Tuple[Dict[str, List[int]], int]] = None

    def expect_inputs(self, shapes: Dict[str, List[int]], batch: int) -> None:
        """Tell the runtime, before ``load``, the input shapes this run will feed (``--shape``, the inputs or eval
        ``.npz``) and the batch for a dynamic leading dim. Runtimes that can compile for fixed shapes use them
        (edgeopt_agent.static_shapes); the others ignore them."""
        self.run_shapes = (dict(shapes), int(batch))

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
