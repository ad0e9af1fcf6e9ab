"""The small interface every runtime implements: load a model, describe its tensors, bind inputs.

The harness owns timing; a runtime only loads and infers.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from ..protocol import TensorInfo
from . import options as _options


class RuntimeMissing(RuntimeError):
    """The runtime's Python package is not importable here; the message names the package to install."""


class ProfileUnsupported(RuntimeError):
    """This runtime has no per-layer profiler the agent can drive; the message says why and what to use."""


class LayerProfiler:
    """Per-layer timings of a runtime loaded by :meth:`Runtime.profile`.

    The agent calls :meth:`start` after warm-up, :meth:`record` after each inference it wants kept (outside the
    timed call), then :meth:`layers` once. Each layer event is a dict (see ``edgeopt_agent.profile`` for the keys):
    ``name``, ``op_type``, ``impl``, ``provider``, ``precision``, ``original_names``, ``node_index``,
    ``executed``, ``duration_us`` and ``start_us`` (None when the runtime reports no start times).
    """

    #: How start times in the trace were obtained (``runtime`` or ``sequential``).
    trace_source = "runtime"

    def start(self) -> None:
        """Called once after warm-up, before the first profiled inference: drop what warm-up left behind."""
        return None

    def record(self) -> None:
        """Mark the end of one kept inference (called after each inference following :meth:`start`)."""
        raise NotImplementedError

    def layers(self) -> List[List[Dict[str, Any]]]:
        """Layer events of every recorded inference, in execution order; call once, after the last ``record``."""
        raise NotImplementedError

    def notes(self) -> List[str]:
        """Caveats of this profiler (what its times include, what it cannot see)."""
        return []


class Runtime:
    """Base class of the agent's runtimes.

    Class attributes (read without loading the runtime's library; the host reads them too, so each fact is
    declared here once and the host's descriptor, ``edgeopt.registry``, derives its own from them):
        name: the registry name; a host runtime descriptor of the same name adds the host-side facts.
        formats: model formats it loads, as the host names them.
        loads_any: it loads every format (``null``); ``formats`` is then empty.
        packages: (import name, distribution names) of the packages that provide it; ``probe`` reports them.
        option_schema: the options ``load`` accepts (:class:`~edgeopt_agent.runtimes.options.Option`), checked by
            :meth:`check_options` here and by the host before it sends a request; None: not declared, any
            option is passed through unchecked.
    """

    name = "base"
    formats: Tuple[str, ...] = ()
    loads_any = False
    packages: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    option_schema: _options.Schema = None
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

    def check_options(self, options: Dict[str, Any]) -> None:
        """Refuse an unknown option or a bad value (ValueError, one line naming the option and the known ones)."""
        _options.check(self.name, self.option_schema, options)

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

    #: Why :meth:`profile` cannot work with this runtime; empty on runtimes that implement it.
    profile_unsupported = "no per-layer profiler is implemented for this runtime"

    def profile(self, model_path: str, options: Dict[str, Any], threads: int) -> LayerProfiler:
        """Load the model with the runtime's own per-layer profiler on (instead of :meth:`load`).

        Raises:
            ProfileUnsupported: the runtime has no profiler the agent can drive (``profile_unsupported`` says why).
        """
        raise ProfileUnsupported(self.profile_unsupported)
