"""The tiny LLM fixtures (tests/llm_models.py): int4 onnxruntime-genai and OpenVINO GenAI folders."""

from tests.llm_models import tiny_llama_fp32, tiny_ortgenai, tiny_ovgenai  # noqa: F401
