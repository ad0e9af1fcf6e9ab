"""llama.cpp's importance matrix, collected on the Hugging Face model: for every matrix the quantizer will see,
the mean over calibration tokens of each input column's squared activation.

That is what ``llama-imatrix`` computes (its ``sums / counts``, the values ``llama-quantize --imatrix`` hands the
quantizer), but llama-cpp-python builds no tools (``LLAMA_BUILD_TOOLS`` off), so the same statistic is read here
with forward hooks on the source model's ``nn.Linear`` inputs, in FP32, and handed to llama.cpp's quantizer through
its C API (``llama_model_quantize_params.imatrix``: an array of ``{name, data, size}`` ended by a null name).
Names are the GGUF tensor names, mapped with gguf-py's own tensor-name map for the model's architecture (the
converter's), never by hand. As ``llama-imatrix`` does by default, the output projection (``output.weight``) gets
no entry. The quantizer's own checks apply: a size that does not match its tensor, or a non-finite value, fails.

Runs in the GGUF export's child process (:mod:`edgeopt.llm.gguf_export`), after the converter has put gguf-py
and its ``conversion`` package on ``sys.path``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..inbound import read_json
from .calib_windows import calibration_windows


def collect(src: Path, text: Path, samples: int, tokens: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Mean squared input activation per column of every ``nn.Linear`` of ``src`` but the LM head, keyed by the
    module's Hugging Face name; and the facts (windows, tokens)."""
    import numpy as np
    import torch
    from transformers import AutoModelForCausalLM

    windows = calibration_windows(src, text, samples, tokens)
    model = AutoModelForCausalLM.from_pretrained(src, dtype=torch.float32).eval()
    head = model.get_output_embeddings()
    sums: dict[str, Any] = {}
    counts: dict[str, int] = {}

    def hook(name: str) -> Any:
        def record(_module: Any, args: tuple[Any, ...], _out: Any) -> None:
            x = args[0].detach().reshape(-1, args[0].shape[-1]).double()
            sums[name] = sums.get(name, 0) + (x * x).sum(dim=0)
            counts[name] = counts.get(name, 0) + x.shape[0]
        return record

    handles = [m.register_forward_hook(hook(n)) for n, m in model.named_modules()
               if isinstance(m, torch.nn.Linear) and m is not head]
    with torch.no_grad():
        for window in windows:
            model(input_ids=torch.tensor([window]))
    for h in handles:
        h.remove()
    means = {n: (s / counts[n]).float().numpy().astype(np.float32) for n, s in sums.items()}
    return means, {"windows": len(windows), "tokens": sum(len(w) for w in windows)}


def gguf_names(src: Path, means: dict[str, Any]) -> dict[str, Any]:
    """``means`` keyed by the GGUF tensor names of the model's architecture (gguf-py's map, as the converter).

    Raises:
        SystemExit: a matrix the map does not know (the entry would silently be missing).
    """
    import gguf
    from conversion import get_model_class  # llama.cpp's converter, from the sdist: its architecture lookup

    config = read_json(src / "config.json")
    arch = get_model_class(config["architectures"][0]).model_arch
    names = gguf.get_tensor_name_map(arch, int(config["num_hidden_layers"]))
    out: dict[str, Any] = {}
    for hf_name, values in means.items():
        mapped = names.get_name(hf_name + ".weight", try_suffixes=(".weight",))
        if mapped is None:
            raise SystemExit(f"importance matrix: {hf_name} has no GGUF name for {arch.name}; the level cannot be "
                             "built with an imatrix")
        out[mapped] = values
    return out


def quantize_params_imatrix(entries: dict[str, Any]) -> tuple[Any, list[Any]]:
    """The C array for ``llama_model_quantize_params.imatrix`` (null-name terminated) and what must stay alive
    while the quantizer runs."""
    import ctypes

    import llama_cpp
    import numpy as np

    keep: list[Any] = []
    array = (llama_cpp.llama_model_imatrix_data * (len(entries) + 1))()
    for i, (name, values) in enumerate(sorted(entries.items())):
        data = np.ascontiguousarray(values, dtype=np.float32)
        encoded = name.encode()
        keep += [data, encoded]
        array[i].name = encoded
        array[i].data = data.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        array[i].size = data.size
    array[len(entries)].name = None
    keep.append(array)
    return array, keep
