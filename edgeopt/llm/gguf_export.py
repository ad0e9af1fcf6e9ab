"""Build a GGUF with llama.cpp's own tools, in a child process: its converter (``convert_hf_to_gguf.py``) makes
the F32 GGUF from the Hugging Face folder, its quantizer (``llama_model_quantize``, llama-quantize's library call)
makes the level's type from that F32 file.

The converter is not in any wheel: it ships inside llama-cpp-python's source distribution (``vendor/llama.cpp``:
``convert_hf_to_gguf.py``, its ``conversion`` package and ``gguf-py``, the tensor-name maps). The first export
downloads that sdist once (``pip download --no-binary :all: --no-deps llama-cpp-python==<installed version>``)
and keeps those three parts under the tools directory (``<tools_dir>/llama_cpp_convert/<version>``, the same root
as ``edgeopt tools``), so the converter always matches the installed llama.cpp. Nothing is hand-mapped here.

Two things the converter and quantizer do that a caller must know:

- The converter names a BPE tokenizer's pre-tokenizer by hashing how it splits a test string, and refuses one it
  does not know ("BPE pre-tokenizer was not recognized"), which every tokenizer trained here is. A tokenizer whose
  ``tokenizer.json`` pre-tokenizer is exactly GPT-2's byte-level one (``ByteLevel``, the GPT-2 regex, no prefix
  space) splits as llama.cpp's ``gpt-2`` pre-tokenizer does, so it is declared as that (recorded in the report);
  any other unknown one still fails with the converter's message.
- llama.cpp quantizes a tensor whose row length its type's block does not divide (256 for the K-quants) with a
  fallback type, silently. The report records the real type of every tensor (read back with gguf-py), and a level
  none of whose matrices got its type is refused (it would be another level under this level's name).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..enums import Precision
from ..errors import InputError
from ..fsutil import atomic_write_text
from ..inbound import read_json
from ..tools.manager import tools_dir
from .exporter import ExportOutcome, LlmExporter
from .ort_genai_export import LlmExportError

ENTRY_FILE = "model.gguf"
NEEDED = ("llama_cpp", "torch", "transformers", "sentencepiece")  # quantizer; the converter's imports
DIST = "llama-cpp-python"
CONVERTER_DIR = "llama_cpp_convert"
_PARTS = ("convert_hf_to_gguf.py", "conversion/", "gguf-py/gguf/", "LICENSE")  # under vendor/llama.cpp/ in the sdist
# Level type -> (the ggml tensor type its matrices get, the row block it needs, its weight precision).
TYPES: dict[str, tuple[str, int, Precision]] = {
    "F32": ("F32", 1, Precision.FP32), "F16": ("F16", 1, Precision.FP16), "Q8_0": ("Q8_0", 32, Precision.INT8),
    "Q6_K": ("Q6_K", 256, Precision.INT8), "Q5_K_M": ("Q5_K", 256, Precision.INT8),
    "Q4_K_M": ("Q4_K", 256, Precision.INT4), "Q4_0": ("Q4_0", 32, Precision.INT4),
}


class GgufSettings(BaseModel):
    """One GGUF level: llama.cpp's quantization type (llama-quantize's name)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["F32", "F16", "Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q4_0"] = Field(
        description="llama.cpp type: F32 is the converter's output; the others are quantized from it.")
    threads: int = Field(default=0, ge=0, description="Quantizer threads (0: all cores).")
    imatrix: bool = Field(default=False, description="llama.cpp's importance matrix (data-aware): the quantizer "
                          "weighs each column by its mean squared activation on calibration text; needs --calib TEXT.")
    calib_samples: int = Field(default=32, ge=1, le=4096, description="Calibration windows cut from the text.")
    calib_tokens: int = Field(default=128, ge=8, le=8192, description="Tokens per calibration window.")

    @model_validator(mode="after")
    def _imatrix_needs_a_quantized_type(self) -> GgufSettings:
        if self.imatrix and TYPES[self.type][1] <= 1:
            raise ValueError(f"imatrix applies to the quantized types, not {self.type}")
        return self

    @property
    def data_aware(self) -> bool:
        """Whether the export reads calibration text (the importance matrix)."""
        return self.imatrix

    @property
    def weight_precision(self) -> Precision:
        """The precision the manifest records (Q5/Q6 count as int8: Precision has no 5- or 6-bit value)."""
        return TYPES[self.type][2]


def converter_dir(version: str, root: Path | None = None) -> Path:
    """llama.cpp's converter for llama-cpp-python ``version``, fetched from its sdist on first use.

    Raises:
        LlmExportError: pip could not download the sdist, or it lacks the converter.
    """
    final = (root or tools_dir()) / CONVERTER_DIR / version
    if (final / "convert_hf_to_gguf.py").is_file() and (final / "gguf-py" / "gguf").is_dir():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="edgeopt-gguf-sdist-", dir=final.parent) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "-q", "--no-binary", ":all:",
               "--no-deps", "-d", tmp, f"{DIST}=={version}"]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
        sdists = sorted(Path(tmp).glob("*.tar.gz"))
        if proc.returncode != 0 or not sdists:
            tail = " ".join((proc.stderr or proc.stdout).strip().splitlines()[-2:])[:300]
            raise LlmExportError(f"cannot fetch llama.cpp's converter ({DIST}=={version} sdist: {tail}); check access "
                                 f"to PyPI, or unpack vendor/llama.cpp of that sdist into {final}")
        staged = Path(tmp) / "converter"
        _extract(sdists[0], staged)
        if final.exists():  # another process got there first
            shutil.rmtree(staged)
        else:
            os.replace(staged, final)
    return final


def _extract(sdist: Path, out: Path) -> None:
    with tarfile.open(sdist) as tar:
        members = []
        for m in tar.getmembers():
            _, _, rel = m.name.partition("/vendor/llama.cpp/")
            if rel and (m.isfile() or m.isdir()) and any(rel == p or rel.startswith(p) for p in _PARTS) \
                    and ".." not in Path(rel).parts:
                m.name = rel
                members.append(m)
        if not any(m.name == "convert_hf_to_gguf.py" for m in members):
            raise LlmExportError(f"{sdist.name} holds no vendor/llama.cpp/convert_hf_to_gguf.py")
        tar.extractall(out, members=members, filter="data")


def llama_cpp_version() -> str:
    """The installed llama-cpp-python's version (the converter fetched matches it).

    Raises:
        LlmExportError: llama-cpp-python is not installed.
    """
    try:
        return importlib.metadata.version(DIST)
    except importlib.metadata.PackageNotFoundError:
        raise LlmExportError("the GGUF export needs llama-cpp-python (its quantizer and its converter's version): pip "
                             "install 'edgeopt[llamacpp]' (compiles llama.cpp, ~15 min on 2 cores)") from None


def export_gguf(src: Path, out: Path, settings: GgufSettings, *, calib_text: Path | None = None,
                timeout_s: float = 3600) -> tuple[float, dict[str, Any]]:
    """Write ``out/model.gguf`` from the Hugging Face folder ``src``; return (seconds, the child's report).
    ``calib_text``: what the importance matrix is collected on (required when ``settings.imatrix``).

    Raises:
        LlmExportError: a package is missing, the conversion or quantization failed, or the level's type reached
            none of the model's matrices.
    """
    missing = [m for m in NEEDED if importlib.util.find_spec(m) is None]
    if missing:
        raise LlmExportError(f"the GGUF export needs {', '.join(missing)}: pip install 'edgeopt[llamacpp,llm,torch]'")
    conv = converter_dir(llama_cpp_version())
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TQDM_DISABLE": "1"}
    start = time.monotonic()
    report = out / ".gguf-report.json"
    cmd = [sys.executable, "-m", "edgeopt.llm.gguf_export", str(src), str(out / ENTRY_FILE), "--type", settings.type,
           "--converter", str(conv), "--threads", str(settings.threads), "--report", str(report)]
    if settings.imatrix:
        if calib_text is None:
            raise LlmExportError(f"the {settings.type} importance-matrix level is data-aware: give --calib TEXT")
        cmd += ["--imatrix-text", str(calib_text), "--calib-samples", str(settings.calib_samples),
                "--calib-tokens", str(settings.calib_tokens)]
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise LlmExportError(f"the GGUF export ran over {timeout_s:.0f} s on {src}") from None
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
        raise LlmExportError(f"the GGUF export ({settings.type}) failed on {src} (exit {proc.returncode}): "
                             f"{lines[-1] if lines else 'no output'}")
    facts = read_json(report)
    report.unlink()
    return time.monotonic() - start, facts


def width_problem(config: Mapping[str, Any], level: str) -> str | None:
    """Why no matrix of this model can take ``level``'s type: llama.cpp needs rows (a matrix's input width:
    ``hidden_size`` for most, ``intermediate_size`` for the MLP's down projection) that its block divides."""
    block = TYPES[level][1]
    widths: dict[str, int] = {k: v for k in ("hidden_size", "intermediate_size")
                              if isinstance(v := config.get(k), int)}
    if block <= 1 or not widths or any(w % block == 0 for w in widths.values()):
        return None
    shown = ", ".join(f"{k} {w}" for k, w in widths.items())
    return (f"{level} needs rows that are multiples of {block} and none of this model's are ({shown}, config.json): "
            f"llama.cpp would store every matrix as a fallback type; use q8_0 or q4_0 (block 32)")


class GgufExporter(LlmExporter):
    """llama.cpp's converter + quantizer (the ``llama_cpp`` runtime's exporter)."""

    runtime = "llama_cpp"
    settings_model = GgufSettings
    pass_name = "llama_cpp_gguf"
    versioned = ("llama-cpp-python", "torch", "transformers", "sentencepiece")

    def cannot_apply(self, config: Mapping[str, Any], settings: BaseModel) -> str | None:
        return width_problem(config, settings.type) if isinstance(settings, GgufSettings) else None

    def export(self, src: Path, out: Path, settings: BaseModel, *, calib_text: Path | None = None) -> ExportOutcome:
        if not isinstance(settings, GgufSettings):
            raise InputError(f"GGUF export settings must be GgufSettings, not {type(settings).__name__}")
        calib = calib_text if settings.imatrix else None
        seconds, facts = export_gguf(src, out, settings, calib_text=calib)
        config = {**settings.model_dump(), **({"calib_text": str(calib)} if calib is not None else {})}
        return ExportOutcome(seconds=seconds, pass_name=self.pass_name, pass_config=config, report=facts)


EXPORTER = GgufExporter()


# --- the child process: python -m edgeopt.llm.gguf_export SRC OUT --type T --converter DIR --report R ---

TOKENIZER_MAX_BYTES = 256 * 1024 * 1024  # a tokenizer.json: a few MB for a 150k vocabulary


def _gpt2_byte_level(folder: Path) -> bool:
    """The folder's tokenizer.json pre-tokenizer is GPT-2's byte-level one (what llama.cpp calls ``gpt-2``)."""
    try:
        data = read_json(folder / "tokenizer.json", max_bytes=TOKENIZER_MAX_BYTES)
        pre = (data.get("pre_tokenizer") if isinstance(data, dict) else None) or {}
    except (OSError, ValueError):
        return False
    return (pre.get("type") == "ByteLevel" and pre.get("use_regex", True) is True
            and pre.get("add_prefix_space") is False)


def _convert(src: Path, dst: Path, conv: Path, declared: list[str]) -> None:
    """llama.cpp's converter (F32), the unknown GPT-2 byte-level pre-tokenizer declared as ``gpt-2``."""
    sys.path[:0] = [str(conv / "gguf-py"), str(conv)]
    from conversion import base  # llama.cpp's, from the sdist

    original = base.TextModel.get_vocab_base_pre

    def get_vocab_base_pre(self: Any, tokenizer: Any) -> str:
        try:
            return str(original(self, tokenizer))
        except NotImplementedError:
            if not _gpt2_byte_level(Path(self.dir_model)):
                raise
            declared.append("gpt-2")
            return "gpt-2"

    base.TextModel.get_vocab_base_pre = get_vocab_base_pre
    import convert_hf_to_gguf

    sys.argv = ["convert_hf_to_gguf.py", str(src), "--outfile", str(dst), "--outtype", "f32"]
    convert_hf_to_gguf.main()


def _quantize(f32: Path, dst: Path, level: str, threads: int, imatrix: dict[str, Any] | None = None) -> None:
    """llama-quantize's library call; ``imatrix``: GGUF tensor name -> mean squared activation per column."""
    import ctypes

    import llama_cpp

    from .gguf_imatrix import quantize_params_imatrix

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, "LLAMA_FTYPE_ALL_F32" if level == "F32" else f"LLAMA_FTYPE_MOSTLY_{level}")
    params.nthread = threads
    keep: list[Any] = []
    if imatrix:
        array, keep = quantize_params_imatrix(imatrix)
        params.imatrix = ctypes.cast(array, ctypes.POINTER(llama_cpp.llama_model_imatrix_data))
    code = llama_cpp.llama_model_quantize(str(f32).encode(), str(dst).encode(), ctypes.byref(params))
    del keep  # the arrays the quantizer read
    if code != 0:
        raise SystemExit(f"llama_model_quantize returned {code} for {level}")


def _type_mix(path: Path) -> tuple[dict[str, int], int]:
    """Tensor count per ggml type, and how many matrices (2-D tensors) there are."""
    from gguf import GGUFReader  # gguf-py from the converter's sdist

    tensors = GGUFReader(str(path)).tensors
    mix = Counter(t.tensor_type.name for t in tensors)
    return dict(sorted(mix.items())), sum(1 for t in tensors if len([d for d in t.shape if d > 1]) >= 2)


def _imatrix(args: argparse.Namespace) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The importance matrix by GGUF tensor name and its facts, when ``--imatrix-text`` asks for one."""
    if args.imatrix_text is None:
        return None, None
    from .gguf_imatrix import collect, gguf_names

    means, facts = collect(args.src, args.imatrix_text, args.calib_samples, args.calib_tokens)
    entries = gguf_names(args.src, means)
    return entries, {**facts, "tensors": len(entries), "text": str(args.imatrix_text),
                     "statistic": "mean squared input activation per column (llama-imatrix's sums / counts)"}


def _child(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m edgeopt.llm.gguf_export")
    parser.add_argument("src", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--type", required=True, choices=sorted(TYPES))
    parser.add_argument("--converter", type=Path, required=True)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--report", type=Path, required=True)
    parser.add_argument("--imatrix-text", type=Path, default=None)
    parser.add_argument("--calib-samples", type=int, default=32)
    parser.add_argument("--calib-tokens", type=int, default=128)
    args = parser.parse_args(argv)
    declared: list[str] = []
    f32 = args.out if args.type == "F32" else args.out.with_name(f".{args.out.name}.f32")
    _convert(args.src, f32, args.converter, declared)
    imatrix, imatrix_facts = _imatrix(args)
    if args.type != "F32":
        _quantize(f32, args.out, args.type, args.threads, imatrix)
        f32.unlink()
    mix, matrices = _type_mix(args.out)
    wanted = TYPES[args.type][0]
    if args.type != "F32" and not mix.get(wanted):
        args.out.unlink()
        raise SystemExit(f"{args.type}: no tensor came out as {wanted} (types: {mix}): llama.cpp fell back on every "
                         "matrix; the level would not be what its name says")
    facts = {"type": args.type, "tensor_types": mix, "matrices": matrices, "tensors_at_type": mix.get(wanted, 0),
             "other_types": {t: n for t, n in mix.items() if t not in (wanted, "F32")},
             "pre_tokenizer_declared": declared[0] if declared else None, "gguf_bytes": args.out.stat().st_size,
             "converter": f"{DIST} sdist vendor/llama.cpp/convert_hf_to_gguf.py ({args.converter.name})",
             "imatrix": imatrix_facts}
    atomic_write_text(args.report, json.dumps(facts) + "\n")


if __name__ == "__main__":
    _child(sys.argv[1:])
