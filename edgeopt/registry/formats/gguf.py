"""GGUF: llama.cpp's single-file model format (weights, tokenizer and hyper-parameters in one file).

A model is a ``.gguf`` file, or a folder holding ``model.gguf`` (what ``edgeopt optimize LLM_DIR`` and the LLM
sweep write, so a level's stamp and the shipped deployment sit beside it). Either way the content starts with
the magic ``GGUF``.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import ModelLoadError
from ..format_spec import FormatDescriptor, read_head

MAGIC = b"GGUF"
ENTRY_FILE = "model.gguf"


class GgufFormat(FormatDescriptor):
    """Told by the ``.gguf`` suffix or, for a folder, by its ``model.gguf``; checked by the magic."""

    def marker(self, head: bytes) -> bool | None:
        return head[:4] == MAGIC

    def check_file(self, path: Path, head: bytes) -> None:
        if head[:4] != MAGIC:
            raise ModelLoadError(f"{path} does not start with the GGUF magic (got {head[:4]!r}): pass a file written "
                                 "by llama.cpp's converter or 'edgeopt optimize LLM_DIR --recipe q4_k_m'")

    def check_directory(self, path: Path) -> None:
        """A ``.gguf`` path is the file itself; a folder must hold ``model.gguf``."""
        file = path / ENTRY_FILE if path.is_dir() else path
        if not file.is_file():
            raise ModelLoadError(f"{path} holds no {ENTRY_FILE}: pass a .gguf file or a folder written by "
                                 "'edgeopt optimize LLM_DIR --recipe q4_k_m'")
        self.check_file(file, read_head(file, 4))

    def files(self, path: Path) -> list[Path]:
        """The folder's GGUF (not its level stamp or other files), or the file itself."""
        return [path / ENTRY_FILE] if path.is_dir() else [path]


DESCRIPTOR = GgufFormat(
    name="gguf",
    summary="llama.cpp GGUF LLM (one .gguf file, or a folder holding model.gguf)",
    suffixes=(".gguf",),
    directory=True,  # a folder holding model.gguf is a model too
    kind="generative",
    entry_file=ENTRY_FILE,
)
