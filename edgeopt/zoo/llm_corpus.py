"""Text that ships with Python, for the zoo LLM's tokenizer and training: a fixed list of standard-library sources.

Nothing is downloaded. The list is fixed and read in order, so a given Python version always yields the same text;
the text's digest (not the Python version) is what the trained model's cache key holds.
"""

from __future__ import annotations

import hashlib
import sysconfig
from pathlib import Path

from ..errors import InputError

# Plain-prose-heavy modules (docstrings, comments) of the standard library, present in every CPython 3.10+.
CORPUS_FILES: tuple[str, ...] = (
    "textwrap.py", "string.py", "argparse.py", "json/__init__.py", "json/decoder.py", "json/encoder.py",
    "collections/__init__.py", "functools.py", "pathlib.py", "shutil.py", "tempfile.py", "subprocess.py",
    "inspect.py", "dataclasses.py", "enum.py", "typing.py", "logging/__init__.py", "csv.py", "heapq.py",
    "bisect.py", "random.py", "statistics.py", "fractions.py", "calendar.py", "difflib.py", "pprint.py",
)
# The last this-many characters of each file are held out (evaluation text), the rest is training text.
HELD_OUT_FRACTION = 0.05


def stdlib_dir() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def corpus_texts() -> list[str]:
    """The corpus files' texts, in list order.

    Raises:
        InputError: none of the files is found (a Python without its sources).
    """
    root = stdlib_dir()
    texts = [(root / name).read_text(encoding="utf-8") for name in CORPUS_FILES if (root / name).is_file()]
    if not texts:
        raise InputError(f"no standard-library sources under {root}: the zoo LLM needs a Python with its .py files")
    return texts


def split_texts(texts: list[str]) -> tuple[list[str], list[str]]:
    """(training, held-out) parts: the tail of each file is held out."""
    cut = [len(t) - int(len(t) * HELD_OUT_FRACTION) for t in texts]
    return [t[:c] for t, c in zip(texts, cut, strict=True)], [t[c:] for t, c in zip(texts, cut, strict=True)]


def corpus_digest(texts: list[str]) -> str:
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8") + b"\0")
    return digest.hexdigest()
