"""What edgeopt knows about one model format, in one object: how a file of it is recognised and checked, which
files make up a model, which pass makes it and how the host proves a converted one.

Which runtimes load a format is said by the runtimes (:class:`~edgeopt.registry.runtime_spec.RuntimeDescriptor`
``formats``), or, for a format added later, by the format's ``loaded_by``; each pair is stated once, and
:func:`edgeopt.registry.loaders` reads both. A subclass overrides the methods a format needs (a content marker,
companion files); the data fields cover the rest.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ModelLoadError


class ConversionSource(str, Enum):
    """Which artifact of an optimize run a format's converter starts from."""

    FINAL_ONNX = "final_onnx"  # the recipe's last ONNX artifact
    FP32_ONNX = "fp32_onnx"  # the last FP32 ONNX: the converter quantizes itself (from the calibration data)
    INPUT = "input"  # the optimize input itself (a PyTorch model for Core ML)


class FormatDescriptor(BaseModel):
    """One model format. Register an instance (``edgeopt.formats`` entry point ``name = module:DESCRIPTOR``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_]*$", description="Format name, as in ModelFormat and results.")
    summary: str = Field(min_length=3, description="One line for docs and messages.")
    suffixes: tuple[str, ...] = Field(
        default=(),
        description="Suffixes (lower case, with the dot) that name a file of this format; empty: never detected "
        "from a file name (a TensorRT ONNX is an .onnx file; PyTorch inputs are found by optimize).",
    )
    directory: bool = Field(default=False, description="A model may be a directory: all its files are the model.")
    loads_as: str | None = Field(
        default=None,
        description="The file is this other format's file for a runtime (a TensorRT ONNX is ONNX); None: itself.",
    )
    wrong_runtime_hint: str | None = Field(
        default=None, description="Said when a runtime of ``loads_as`` that is not one of its own is asked to run it."
    )
    loaded_by: tuple[str, ...] = Field(
        default=(),
        description="Runtimes that load it besides those whose descriptor lists it: a new format names an "
        "existing runtime here instead of editing that runtime's descriptor.",
    )
    deployable: bool = Field(default=True, description="False for a training format that no runtime loads (PyTorch).")
    converter: str | None = Field(
        default=None, description="The pass that makes it from an optimize result (edgeopt.passes.convert plans it)."
    )
    conversion_source: ConversionSource = Field(
        default=ConversionSource.FINAL_ONNX, description="The artifact the converter starts from."
    )
    validated_by: tuple[str, ...] = Field(
        default=(),
        description="Runtimes whose host-side inference proves a converted model against the ONNX reference, in "
        "order of preference; empty: checked structurally by its pass only.",
    )
    fallback: bool = Field(
        default=False,
        description="A file with no known suffix and no other format's marker is read as this format (ONNX).",
    )
    kind: str = Field(default="tensor", pattern=r"^[a-z0-9][a-z0-9_]*$",
                      description="The model kind of its models (a registered kind: 'tensor', 'generative').")
    entry_file: str | None = Field(
        default=None,
        description="For a folder format: the file that marks a folder as this format and that a runtime's loader "
        "is pointed at ('genai_config.json'); None: the model is the file itself (or a suffix-named directory).",
    )

    @property
    def file_format(self) -> str:
        """The format a runtime loads the file as (``loads_as``, else this format)."""
        return self.loads_as or self.name

    def marker(self, head: bytes) -> bool | None:
        """Whether the file's first bytes carry this format's marker; None when the format has none."""
        return None

    def check_file(self, path: Path, head: bytes) -> None:
        """Raise :class:`ModelLoadError` when the content of ``path`` contradicts this format (default: none)."""
        return None

    def claims_directory(self, path: Path) -> bool:
        """Whether the directory ``path`` (whatever its name) is meant as a model of this format: it holds the
        format's ``entry_file`` (an LLM folder's ``config.json``/``genai_config.json``); :meth:`check_directory`
        then says what else is missing. Default: never without an ``entry_file`` (directories are told by
        suffix)."""
        return self.entry_file is not None and (path / self.entry_file).is_file()

    def check_directory(self, path: Path) -> None:
        """Raise :class:`ModelLoadError` when ``path`` is not a well-formed model of a ``directory`` format."""
        return None

    def companions(self, path: Path) -> list[Path]:
        """Files that must sit next to the model file ``path`` (external data, weights); default none."""
        return []

    def files(self, path: Path) -> list[Path]:
        """Every file that makes up the model at ``path``: a directory's files, else the file and its companions."""
        if path.is_dir():
            return sorted(p for p in path.rglob("*") if p.is_file())
        return [path, *self.companions(path)]

    def size_bytes(self, path: Path) -> int:
        """Bytes on disk of every file of the model."""
        return sum(f.stat().st_size for f in self.files(path))


def read_head(path: Path, n: int = 1024) -> bytes:
    """The first ``n`` bytes of ``path`` (format markers live there).

    Raises:
        ModelLoadError: the file cannot be read.
    """
    try:
        with open(path, "rb") as fh:
            return fh.read(n)
    except OSError as exc:
        raise ModelLoadError(f"cannot read model {path} ({exc.strerror}): check the path and permissions") from None
