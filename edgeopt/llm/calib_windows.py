"""Calibration windows cut from a text file by the model's own tokenizer: what every data-aware LLM export
(OpenVINO's AWQ / scale estimation, llama.cpp's importance matrix) calibrates on, cut the same way."""

from __future__ import annotations

from pathlib import Path


def calibration_windows(src: Path, text: Path, samples: int, tokens: int) -> list[list[int]]:
    """``samples`` windows of ``tokens`` token ids cut evenly from ``text``, tokenized by the Hugging Face folder
    ``src``'s tokenizer (fewer windows when the text is short).

    Raises:
        SystemExit: the text holds fewer than ``tokens`` tokens (run in an export's child process).
    """
    import numpy as np
    from transformers import AutoTokenizer

    ids = AutoTokenizer.from_pretrained(src)(text.read_text(encoding="utf-8"))["input_ids"]
    if len(ids) < tokens:
        raise SystemExit(f"calibration text {text}: {len(ids)} tokens, fewer than one window of {tokens}: give "
                         "more text or lower calib_tokens")
    starts = np.linspace(0, len(ids) - tokens, num=min(samples, len(ids) - tokens + 1)).astype(int)
    return [list(ids[s:s + tokens]) for s in starts]
