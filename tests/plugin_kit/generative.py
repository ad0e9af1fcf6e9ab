"""The generative runtime plug-in ``genplug``: a descriptor with levels, an exporter and a format, and its agent
runtime (the issue 30 proof that a generative runtime needs no edit to edgeopt)."""

from __future__ import annotations

from pathlib import Path

from .distribution import distribution

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
    return distribution(root, "edgeopt_testplug_gen", """
        [edgeopt.runtimes]
        genplug = edgeopt_testplug_gen.host:GENPLUG

        [edgeopt.formats]
        genplug = edgeopt_testplug_gen.host:GENPLUG_FORMAT

        [edgeopt_agent.runtimes]
        genplug = edgeopt_testplug_gen.agent:GenPlugRuntime
    """, {"host.py": GENERATIVE_HOST, "agent.py": GENERATIVE_AGENT})
