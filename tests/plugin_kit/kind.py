"""The model-kind plug-in: kind ``streamer`` (metric ``rtf``, workload ``frame_ms``, its own compare table), its
format ``stream`` and agent runtime ``streamrt``."""

from __future__ import annotations

from pathlib import Path

from .distribution import distribution

KIND_HOST = '''
    """A third model kind, ``streamer``: a stateful streaming encoder judged by its real-time factor (the time to
    process one frame / the frame's duration; < 1 keeps up with the stream). Its kind descriptor (metrics, rank
    metric, gates, hooks), its format (``.stream``: a JSON file of the encoder's sizes) and its host runtime
    descriptor; the workload model and the raw-run -> cells hook are in ``cells.py``, the agent runtime in
    ``agent.py``. Nothing here is edgeopt's."""
    from edgeopt.errors import ModelLoadError
    from edgeopt.registry import FormatDescriptor, KindDescriptor, MetricSpec, RuntimeDescriptor

    STREAMER = KindDescriptor(
        name="streamer", summary="stateful streaming encoder, judged by its real-time factor per frame",
        agent_command="run",
        metrics=(MetricSpec(name="rtf", unit="ratio", percentiles=("p50", "p90", "p99"), min_exclusive=True,
                            sampled=True),
                 MetricSpec(name="frame_latency_ms", unit="ms", percentiles=("p50", "p90", "p99"),
                            min_exclusive=True)),
        rank_metric="rtf", gates=("metric",), model_word="a streaming encoder",
        workload="edgeopt_testplug_kind.cells:StreamWorkload", raw_cells="edgeopt_testplug_kind.cells:stream_cells",
        run_word="a streaming run", compare_render="edgeopt_testplug_kind.render:render_stream_comparison",
    )


    class StreamFormat(FormatDescriptor):
        def marker(self, head):
            return None  # found by suffix only

        def check_file(self, path, head):
            if not head.lstrip().startswith(b"{"):
                raise ModelLoadError(f"{path} is not a streamer model (a JSON object): write one with its sizes")


    STREAM_FORMAT = StreamFormat(name="stream", summary="streaming encoder sizes (JSON, test plug-in)",
                                 suffixes=(".stream",), kind="streamer", loaded_by=("streamrt",))
    STREAMRT = RuntimeDescriptor(name="streamrt", display_name="StreamRT", module_sets=(("numpy",),),
                                 install="pip install numpy", kinds=("streamer",))
'''

KIND_CELLS = '''
    """The streamer kind's workload settings and how the agent's raw run becomes its cells."""
    import numpy as np
    from pydantic import BaseModel, ConfigDict, Field

    from edgeopt.metrics.cells import ResultCell, series

    _PCT = {"p50": 50.0, "p90": 90.0, "p99": 99.0}


    class StreamWorkload(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)

        frame_ms: int = Field(default=20, gt=0, le=1000, description="Audio per frame, ms (the stream's pace).")


    def stream_cells(raw, workload):
        """One cell per frame duration: per-frame latency (ms) and the real-time factor (latency / frame_ms)."""
        frame_ms = workload.frame_ms
        lat = np.asarray(raw.samples_ns, dtype=np.float64) / 1e6
        rtf = lat / frame_ms

        def stats(values):
            if not values.size:
                return {}
            out = {k: float(np.percentile(values, q, method="inverted_cdf")) for k, q in _PCT.items()}
            return {**out, "mean": float(values.mean())}

        parts = (series("rtf", "ratio", rtf.tolist(), **stats(rtf)),
                 series("frame_latency_ms", "ms", (), **stats(lat)))
        return (ResultCell(key=f"frame{frame_ms}ms", axes={"frame_ms": frame_ms},
                           series=tuple(p for p in parts if p is not None)),)
'''

KIND_RENDER = '''
    """The streamer kind's own ``edgeopt compare`` table: does B still keep up with the stream, per frame duration."""


    def render_stream_comparison(c):
        for cell in c.cells:
            for m in cell.metrics:
                keeps = "keeps up" if m.median_b < 1 else "falls behind"
                print(f"stream {cell.cell}: {m.metric} {m.median_a:.3g} -> {m.median_b:.3g} ({keeps}); "
                      f"{m.verdict.value if m.verdict else 'not judged'}")
        print("stream regression" if c.regression else "stream unchanged")
'''

KIND_AGENT = '''
    """Agent side of ``streamrt``: a recurrent state update per frame (numpy only; never imports edgeopt)."""
    import json

    import numpy as np

    from edgeopt_agent.protocol import TensorInfo
    from edgeopt_agent.runtimes.base import Runtime


    class StreamRuntime(Runtime):
        name = "streamrt"
        formats = ("stream",)
        packages = (("numpy", ("numpy",)),)

        def version(self):
            return np.__version__

        def load(self, model_path, options, threads):
            with open(model_path) as fh:
                spec = json.load(fh)
            self.frame, self.state_size = int(spec["frame_samples"]), int(spec["state"])
            rng = np.random.default_rng(0)
            self.w = rng.standard_normal((self.state_size, self.state_size)).astype(np.float32) / self.state_size
            self.u = rng.standard_normal((self.state_size, self.frame)).astype(np.float32) / self.frame
            self.state = np.zeros(self.state_size, dtype=np.float32)

        def inputs(self):
            return [TensorInfo("frame", [self.frame], "float32")]

        def outputs(self):
            return [TensorInfo("state", [self.state_size], "float32")]

        def bind(self, feeds):
            x = np.asarray(feeds["frame"], dtype=np.float32).reshape(-1)[: self.frame]

            def step():
                self.state = np.tanh(self.w @ self.state + self.u @ x)
                return self.state

            return step
'''


def kind_plugin(root: Path) -> Path:
    """Write the model-kind plug-in (kind ``streamer``, format ``stream``, runtime ``streamrt``) under ``root``."""
    return distribution(root, "edgeopt_testplug_kind", """
        [edgeopt.kinds]
        streamer = edgeopt_testplug_kind.host:STREAMER

        [edgeopt.formats]
        stream = edgeopt_testplug_kind.host:STREAM_FORMAT

        [edgeopt.runtimes]
        streamrt = edgeopt_testplug_kind.host:STREAMRT

        [edgeopt_agent.runtimes]
        streamrt = edgeopt_testplug_kind.agent:StreamRuntime
    """, {"host.py": KIND_HOST, "cells.py": KIND_CELLS, "agent.py": KIND_AGENT,
                                                       "render.py": KIND_RENDER})
