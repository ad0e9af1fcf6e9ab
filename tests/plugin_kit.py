"""Throwaway plug-ins written to a temp directory, found through ``EDGEOPT_PLUGIN_PATH`` exactly as installed
distributions are found (a ``*.dist-info`` with ``entry_points.txt`` next to the package), for the tests that
show a new runtime or format needs no edit anywhere in edgeopt.

- ``runtime_plugin``: runtimes ``ortplug`` (ONNX Runtime under another name) and ``ghostrt`` (its library is
  never installed), host descriptors and agent classes, plus the target ``plugbox`` (this machine, preferring
  ``ortplug``) through ``edgeopt.targets``. ``ortplug`` declares what the sweep and the CLI read from a descriptor:
  a full-precision reference option (``precision: f32``), a low-precision default (it says it runs float parts in
  ``f16`` unless told ``f32``, as OpenVINO does with BF16: the sweep's level ``f16``), the ``qdq`` INT8 backend
  (the INT8 search's latency-aware float set) and its own flag ``--ortplug-device`` (runtime option ``device``).
- ``kind_plugin``: a third model kind ``streamer`` (its own metric, the real-time factor ``rtf``; workload
  ``frame_ms``; its own ``edgeopt compare`` table) with its format ``stream`` and agent runtime ``streamrt``.
- ``format_plugin``: format ``onnxc`` (ONNX bytes in an ``.onnxc`` file, checked by its first byte) loaded by
  the built-in ``onnxruntime``, with its converter pass ``to_onnxc``.
"""

from __future__ import annotations

import textwrap
from pathlib import Path


def _distribution(root: Path, name: str, entry_points: str, modules: dict[str, str]) -> Path:
    """Write package ``name`` (its modules) and its dist-info under ``root``; return ``root``."""
    dist = root / f"{name}-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(textwrap.dedent(entry_points).lstrip())
    pkg = root / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for rel, text in modules.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


RUNTIME_HOST = '''
    """Host descriptors of the throwaway runtimes, and the target directory."""
    from pathlib import Path

    from edgeopt.registry import RuntimeDescriptor
    from edgeopt.registry.runtime_sweep import CliFlag, Int8Backend, LowPrecisionDefault
    from edgeopt.registry.runtimes.onnxruntime import OnnxRuntimeDescriptor

    ORTPLUG = OnnxRuntimeDescriptor(
        name="ortplug", display_name="ORT plug-in", delivers=None,
        module_sets=(("onnxruntime",),), install="pip install edgeopt-ortplug",
        validation_modules=("onnxruntime",),
        reference_options={"precision": "f32"},
        low_precision_default=LowPrecisionDefault(level="f16", option="precision", reports="f16"),
        int8_backends=(Int8Backend.QDQ,),
        cli_flags=(CliFlag(flag="--ortplug-device", option="device", metavar="DEVICE", help="ortplug device: CPU"),),
    )
    GHOSTRT = RuntimeDescriptor(
        name="ghostrt", display_name="Ghost", module_sets=(("ghost_runtime_lib",),),
        install="pip install ghost-runtime-lib (the test plug-in's library)",
    )


    def targets_dir():
        return Path(__file__).parent / "targets"
'''

RUNTIME_AGENT = '''
    """Agent side of the throwaway runtimes (imports edgeopt_agent only, never edgeopt)."""
    from edgeopt_agent.runtimes.base import Runtime, RuntimeMissing
    from edgeopt_agent.runtimes.onnxruntime_rt import OnnxRuntime
    from edgeopt_agent.runtimes.options import Option


    class OrtPlugRuntime(OnnxRuntime):
        """ONNX Runtime with two options of its own: ``device`` (CPU only) and ``precision`` (f32; not given, it
        reports running float parts in f16, a pretend low-precision default: the outputs stay FP32's)."""

        name = "ortplug"
        formats = ("onnx",)
        own = {}
        option_schema = OnnxRuntime.option_schema + (
            Option("device", "str", "ortplug device (CPU only)", default="CPU"),
            Option("precision", "str", "float precision (f32 only; not given: f16)"),
        )

        def _split(self, options):
            self.own = dict((k, options[k]) for k in ("device", "precision") if k in options)
            if self.own.get("device", "CPU") != "CPU" or self.own.get("precision", "f32") != "f32":
                raise ValueError("ortplug: device CPU and precision f32 only (got %r)" % self.own)
            return dict((k, v) for k, v in options.items() if k not in self.own)

        def load(self, model_path, options, threads):
            super().load(model_path, self._split(options), threads)

        def profile(self, model_path, options, threads):
            return super().profile(model_path, self._split(options), threads)

        def details(self):
            out = super().details()
            out.update(device=self.own.get("device", "CPU"), inference_precision=self.own.get("precision", "f16"))
            return out


    class GhostRuntime(Runtime):
        name = "ghostrt"
        formats = ("onnx",)
        packages = (("ghost_runtime_lib", ("ghost-runtime-lib",)),)

        def __init__(self):
            raise RuntimeMissing("ghost_runtime_lib is not installed: pip install ghost-runtime-lib")
'''

PLUGBOX = '''
    name: plugbox
    description: "this machine, preferring the ortplug plug-in runtime"
    arch: x86_64
    accelerator: cpu
    accelerator_kind: cpu
    runtimes: [ortplug, ghostrt, onnxruntime]
    precisions: [fp32, fp16, int8]
    detect: true
'''


def runtime_plugin(root: Path) -> Path:
    """Write the runtime plug-in (``ortplug``, ``ghostrt``, target ``plugbox``) under ``root``."""
    return _distribution(root, "edgeopt_testplug_rt", """
        [edgeopt.runtimes]
        ortplug = edgeopt_testplug_rt.host:ORTPLUG
        ghostrt = edgeopt_testplug_rt.host:GHOSTRT

        [edgeopt.targets]
        testplug = edgeopt_testplug_rt.host:targets_dir

        [edgeopt_agent.runtimes]
        ortplug = edgeopt_testplug_rt.agent:OrtPlugRuntime
        ghostrt = edgeopt_testplug_rt.agent:GhostRuntime
    """, {"host.py": RUNTIME_HOST, "agent.py": RUNTIME_AGENT, "targets/plugbox.yaml": PLUGBOX})


FORMAT_HOST = '''
    """The onnxc format: ONNX bytes in an .onnxc file, loaded by the built-in onnxruntime."""
    from edgeopt.errors import ModelLoadError
    from edgeopt.registry import FormatDescriptor


    class OnnxcFormat(FormatDescriptor):
        def marker(self, head):
            return None  # no marker of its own: found by suffix only

        def check_file(self, path, head):
            if head[:1] != b"\\x08":  # an ONNX ModelProto starts with field 1 (ir_version), tag 0x08
                raise ModelLoadError(f"{path} is not ONNX bytes: write it with the to_onnxc pass")


    ONNXC = OnnxcFormat(
        name="onnxc", summary="ONNX bytes in an .onnxc file (test plug-in)", suffixes=(".onnxc",),
        converter="to_onnxc", validated_by=("onnxruntime",), loaded_by=("onnxruntime",),
    )
'''

FORMAT_PASS = '''
    """The to_onnxc converter: copies the ONNX model into an .onnxc file."""
    import shutil

    from edgeopt.names import ModelFormat
    from edgeopt.passes.base import PassConfig, PassOutput
    from edgeopt.passes.convert_base import ConvertPass


    class ToOnnxcConfig(PassConfig):
        pass


    class ToOnnxcPass(ConvertPass):
        name = "to_onnxc"
        summary = "ONNX -> .onnxc (test plug-in)"
        config_class = ToOnnxcConfig
        output_format = ModelFormat("onnxc")
        suffix = ".onnxc"

        def run(self, source, ctx):
            out = ctx.output_path.with_suffix(".onnxc")
            shutil.copyfile(source.path, out)
            return PassOutput(path=out, precision=source.precision, format=self.output_format)
'''


def format_plugin(root: Path) -> Path:
    """Write the format plug-in (``onnxc`` and its converter ``to_onnxc``) under ``root``."""
    return _distribution(root, "edgeopt_testplug_fmt", """
        [edgeopt.formats]
        onnxc = edgeopt_testplug_fmt.host:ONNXC

        [edgeopt.passes]
        to_onnxc = edgeopt_testplug_fmt.convert:ToOnnxcPass
    """, {"host.py": FORMAT_HOST, "convert.py": FORMAT_PASS})


GENERATIVE_HOST = '''
    """A third generative runtime, ``genplug``: the four things issue 30 says a generative runtime is (its host
    descriptor with levels as data, its exporter, its format, its agent runtime), and nothing else. Its folders are
    onnxruntime-genai exports kept under ``inner/`` beside a ``genplug.json`` marker, so no built-in format claims
    them and its own agent runtime is the only one that loads them."""
    import json
    import os
    import shutil
    import time
    import uuid
    from pathlib import Path

    from edgeopt.llm.exporter import ExportOutcome, LlmExporter
    from edgeopt.llm.ort_genai_export import export_ort_genai
    from edgeopt.llm.recipe import OrtGenaiSettings
    from edgeopt.registry import FormatDescriptor, RuntimeDescriptor
    from edgeopt.registry.lookup import model_digest
    from edgeopt.registry.runtime_sweep import LevelSpec


    STAMP = ".edgeopt-level.json"  # what edgeopt's LLM sweep writes beside a level it built


    def _shelved(src, settings):
        """An onnxruntime-genai export of ``src`` with ``settings`` on the shelf (``$EDGEOPT_TESTPLUG_GEN_SHELF``:
        folders stamped as the sweep stamps its levels), or None."""
        shelf = os.environ.get("EDGEOPT_TESTPLUG_GEN_SHELF")
        if not shelf:
            return None, None
        want = {"source_sha256": model_digest(src, "hf_llm")[0], "settings": settings.model_dump()}
        for stamp in Path(shelf).rglob(STAMP):
            facts = json.loads(stamp.read_text())
            if {k: facts.get(k) for k in want} == want:
                return stamp.parent, want
        return None, want


    class GenPlugExporter(LlmExporter):
        """onnxruntime-genai's builder into ``inner/``; an identical export already on the test's shelf (the same
        source digest and settings) is copied instead of built again, and each new one is shelved."""

        runtime = "genplug"
        settings_model = OrtGenaiSettings
        pass_name = "genplug_export"
        versioned = ("onnxruntime-genai",)

        def export(self, src, out, settings, *, calib_text=None):
            start = time.monotonic()
            found, want = _shelved(src, settings)
            if found is not None:
                shutil.copytree(found, out / "inner", ignore=shutil.ignore_patterns(STAMP))
                seconds = time.monotonic() - start
            else:
                seconds = export_ort_genai(src, out / "inner", settings)
                if want is not None:
                    shelved = Path(os.environ["EDGEOPT_TESTPLUG_GEN_SHELF"]) / "genplug" / uuid.uuid4().hex
                    shutil.copytree(out / "inner", shelved)
                    (shelved / STAMP).write_text(json.dumps(want))
            (out / "genplug.json").write_text(json.dumps({"inner": "inner", "precision": settings.precision}))
            return ExportOutcome(seconds=seconds, pass_name=self.pass_name, pass_config=settings.model_dump())


    EXPORTER = GenPlugExporter()

    GENPLUG = RuntimeDescriptor(
        name="genplug", display_name="GenPlug", auto_select=False, delivers="genplug",
        module_sets=(("onnxruntime_genai",),), install="pip install edgeopt-genplug",
        kinds=("generative",), exporter="edgeopt_testplug_gen.host:EXPORTER",
        levels=(LevelSpec(name="int4-b32-rtn", settings={"precision": "int4", "block_size": 32, "algo": "rtn"}),
                LevelSpec(name="fp32", settings={"precision": "fp32"}, reference=True)),
    )
    GENPLUG_FORMAT = FormatDescriptor(
        name="genplug", summary="GenPlug LLM folder (genplug.json + inner onnxruntime-genai export)",
        directory=True, kind="generative", entry_file="genplug.json",
    )
'''

GENERATIVE_AGENT = '''
    """Agent side of ``genplug``: onnxruntime-genai on the folder's ``inner/`` export."""
    import os

    from edgeopt_agent.runtimes.ortgenai_rt import OrtGenaiRuntime


    class GenPlugRuntime(OrtGenaiRuntime):
        name = "genplug"
        formats = ("genplug",)

        def load(self, model_path, options, threads):
            folder = model_path if os.path.isdir(model_path) else os.path.dirname(model_path)
            super().load(os.path.join(folder, "inner"), options, threads)
'''


def generative_plugin(root: Path) -> Path:
    """Write the generative runtime plug-in (runtime and format ``genplug``) under ``root``."""
    return _distribution(root, "edgeopt_testplug_gen", """
        [edgeopt.runtimes]
        genplug = edgeopt_testplug_gen.host:GENPLUG

        [edgeopt.formats]
        genplug = edgeopt_testplug_gen.host:GENPLUG_FORMAT

        [edgeopt_agent.runtimes]
        genplug = edgeopt_testplug_gen.agent:GenPlugRuntime
    """, {"host.py": GENERATIVE_HOST, "agent.py": GENERATIVE_AGENT})


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
    return _distribution(root, "edgeopt_testplug_kind", """
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
