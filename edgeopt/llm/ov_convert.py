"""Convert a Hugging Face decoder folder to an OpenVINO GenAI folder, offline, without optimum-intel.

Run as a child process (``python -m edgeopt.llm.ov_convert SRC OUT --weights int4_sym ...``) by
:mod:`edgeopt.llm.ov_genai_export`: it holds torch, transformers and the model in memory. optimum-intel is not
used because its current release pins ``transformers<5.6``; this does the same steps directly:

1. trace the model with the KV cache as flat inputs/outputs (``openvino.convert_model`` of a wrapper that builds
   a ``DynamicCache`` from them), named as OpenVINO GenAI expects: ``input_ids``, ``attention_mask``,
   ``position_ids``, ``past_key_values.N.key/value`` -> ``logits``, ``present.N.key/value``;
2. add ``beam_idx`` (a Gather on every cache input along the batch axis), make the cache a model state
   (``apply_make_stateful_transformation``) with zero initial states sized from the batch of ``input_ids``;
3. compress the weights with NNCF ``compress_weights`` (INT4_SYM/ASYM with a group size and ratio, or INT8), or
   save them in FP16/FP32;
4. convert the tokenizer with ``openvino_tokenizers.convert_tokenizer(..., with_detokenizer=True)``.

Python 3.10+ on the host only (the device agent never imports it).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from .calib_windows import calibration_windows

COPIED = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
          "special_tokens_map.json", "tokenizer.model")
WEIGHTS = ("int4_sym", "int4_asym", "int8_sym", "int8_asym", "fp16", "fp32")


def _wrapper(model: Any, layers: int) -> Any:
    import torch
    from transformers import DynamicCache

    class FlatCache(torch.nn.Module):
        """The decoder with its cache as flat tensors (what a traced graph can carry)."""

        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, position_ids: Any, *past: Any) -> Any:
            cache = DynamicCache(config=model.config)
            layer: Any
            for i, layer in enumerate(cache.layers):
                # set the layer's tensors directly: its lazy init concatenates onto an empty rank-1 tensor,
                # which does not trace
                layer.device, layer.dtype = past[2 * i].device, past[2 * i].dtype
                layer.keys, layer.values, layer.is_initialized = past[2 * i], past[2 * i + 1], True
            out = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                             past_key_values=cache, use_cache=True)
            flat = [t for layer in out.past_key_values.layers[:layers] for t in (layer.keys, layer.values)]
            return (out.logits, *flat)

    return FlatCache()


def trace(src: Path) -> tuple[Any, int]:
    """(the OpenVINO model with named flat cache inputs/outputs, number of layers)."""
    import openvino as ov
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(src, dtype=torch.float32).eval()
    cfg = model.config
    layers, kv_heads = cfg.num_hidden_layers, cfg.num_key_value_heads
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    past = [torch.zeros(1, kv_heads, 2, head_dim) for _ in range(2 * layers)]
    example = (torch.ones(1, 3, dtype=torch.long), torch.ones(1, 5, dtype=torch.long),
               torch.arange(2, 5).unsqueeze(0), *past)
    shapes = [ov.PartialShape([-1, -1])] * 3 + [ov.PartialShape([-1, kv_heads, -1, head_dim])] * (2 * layers)
    with torch.no_grad():
        converted = ov.convert_model(_wrapper(model, layers), example_input=example, input=shapes)
    cache_names = [f"{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    in_names = ["input_ids", "attention_mask", "position_ids", *(f"past_key_values.{n}" for n in cache_names)]
    for port, name in zip(converted.inputs, in_names, strict=True):
        port.get_tensor().set_names({name})
    for port, name in zip(converted.outputs, ["logits", *(f"present.{n}" for n in cache_names)], strict=True):
        port.get_tensor().set_names({name})
    return converted, layers


def make_stateful(model: Any, layers: int) -> None:
    """beam_idx, the cache as states, zero initial states with the batch of input_ids (as optimum-intel does)."""
    import numpy as np
    import openvino as ov
    import openvino.opset13 as ops
    from openvino._offline_transformations import apply_make_stateful_transformation

    beam = ops.parameter([-1], ov.Type.i32, name="beam_idx")
    beam.output(0).get_tensor().set_names({"beam_idx"})
    for param in model.get_parameters():
        if param.output(0).get_any_name().startswith("past_key_values."):
            consumers = list(param.output(0).get_target_inputs())
            gathered = ops.gather(param, beam, ops.constant(0))
            for consumer in consumers:
                consumer.replace_source_output(gathered.output(0))
    model.add_parameters([beam])
    model.validate_nodes_and_infer_types()
    pairs = {f"past_key_values.{i}.{kv}": f"present.{i}.{kv}" for i in range(layers) for kv in ("key", "value")}
    apply_make_stateful_transformation(model, pairs)
    batch = ops.gather(ops.shape_of(model.input("input_ids"), output_type="i64"), ops.constant([0]),
                       ops.constant(0))
    for op in model.get_ops():
        if op.get_type_name() == "ReadValue":
            dims = [d.get_min_length() for d in op.get_output_partial_shape(0)]
            parts = [batch, *(ops.constant(np.array([d], dtype=np.int64)) for d in dims[1:])]
            zeros = ops.constant(0.0, dtype=op.get_output_element_type(0))
            op.set_arguments([ops.broadcast(zeros, ops.concat(parts, axis=0))])
    model.validate_nodes_and_infer_types()


def calibration_inputs(src: Path, text: Path, samples: int, tokens: int) -> list[dict[str, Any]]:
    """Inputs of the stateful model for NNCF's data-aware compression: ``samples`` windows of ``tokens`` tokens
    cut evenly from ``text`` (:func:`~edgeopt.llm.calib_windows.calibration_windows`), each a fresh sequence
    (beam_idx 0)."""
    import numpy as np

    return [{"input_ids": np.asarray([window], dtype=np.int64),
             "attention_mask": np.ones((1, tokens), dtype=np.int64),
             "position_ids": np.arange(tokens, dtype=np.int64)[None],
             "beam_idx": np.zeros(1, dtype=np.int32)} for window in calibration_windows(src, text, samples, tokens)]


def compress(model: Any, weights: str, group_size: int, ratio: float, data: list[dict[str, Any]] | None = None,
             awq: bool = False, scale_estimation: bool = False) -> Any:
    """NNCF weight compression for the int modes; the float modes are left to save_model. ``data``: calibration
    inputs for AWQ / scale estimation (int4 only)."""
    if weights in ("fp16", "fp32"):
        return model
    import nncf

    mode = nncf.CompressWeightsMode(weights)
    if weights.startswith("int4"):
        extra: dict[str, Any] = {}
        if data is not None:
            extra = {"dataset": nncf.Dataset(data), "awq": awq, "scale_estimation": scale_estimation}
        return nncf.compress_weights(model, mode=mode, group_size=group_size, ratio=ratio, **extra)
    return nncf.compress_weights(model, mode=mode)


def convert(src: Path, out: Path, weights: str, group_size: int, ratio: float,
            calib: dict[str, Any] | None = None) -> dict[str, Any]:
    """Trace, make stateful, compress (``calib``: text, samples, tokens, awq, scale_estimation) and save."""
    import openvino as ov
    import openvino_tokenizers
    from transformers import AutoTokenizer

    model, layers = trace(src)
    make_stateful(model, layers)
    data = None
    if calib is not None:
        data = calibration_inputs(src, Path(calib["text"]), int(calib["samples"]), int(calib["tokens"]))
    model = compress(model, weights, group_size, ratio, data, bool(calib and calib["awq"]),
                     bool(calib and calib["scale_estimation"]))
    out.mkdir(parents=True, exist_ok=True)
    ov.save_model(model, out / "openvino_model.xml", compress_to_fp16=weights == "fp16")
    tokenizer, detokenizer = openvino_tokenizers.convert_tokenizer(AutoTokenizer.from_pretrained(src),
                                                                   with_detokenizer=True)
    ov.save_model(tokenizer, out / "openvino_tokenizer.xml")
    ov.save_model(detokenizer, out / "openvino_detokenizer.xml")
    for name in COPIED:
        if (src / name).is_file():
            shutil.copy2(src / name, out / name)
    ops: dict[str, int] = {}
    weight_types: dict[str, int] = {}
    for op in model.get_ops():
        ops[op.get_type_name()] = ops.get(op.get_type_name(), 0) + 1
        if op.get_type_name() == "Constant" and len(op.get_output_partial_shape(0)) >= 2:
            kind = op.get_output_element_type(0).get_type_name()
            weight_types[kind] = weight_types.get(kind, 0) + 1
    return {"layers": layers, "op_counts": dict(sorted(ops.items())),
            "weight_types": dict(sorted(weight_types.items())), "calibration_windows": len(data or [])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--weights", choices=WEIGHTS, required=True)
    parser.add_argument("--group-size", type=int, default=128)
    parser.add_argument("--ratio", type=float, default=1.0)
    parser.add_argument("--report", type=Path, required=True, help="JSON file the facts are written to")
    parser.add_argument("--calib-text", type=Path, default=None, help="calibration text (AWQ, scale estimation)")
    parser.add_argument("--calib-samples", type=int, default=32)
    parser.add_argument("--calib-tokens", type=int, default=128)
    parser.add_argument("--awq", action="store_true")
    parser.add_argument("--scale-estimation", action="store_true")
    args = parser.parse_args(argv)
    calib = None
    if args.calib_text is not None:
        calib = {"text": args.calib_text, "samples": args.calib_samples, "tokens": args.calib_tokens,
                 "awq": args.awq, "scale_estimation": args.scale_estimation}
    facts = convert(args.src, args.out, args.weights, args.group_size, args.ratio, calib)
    args.report.write_text(json.dumps(facts), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
