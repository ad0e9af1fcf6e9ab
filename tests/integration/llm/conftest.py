"""The tiny int4 onnxruntime-genai Llama fixture (tests/llm_models.py), built once per session."""

from tests.llm_models import tiny_ortgenai  # noqa: F401
