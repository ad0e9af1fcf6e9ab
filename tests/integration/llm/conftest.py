"""The tiny LLM fixtures (tests/llm_models.py): int4 onnxruntime-genai and OpenVINO GenAI folders."""

from tests.integration.llm.zoo_levels import zoo  # noqa: F401  (module-scoped: one per test file)
from tests.llm_models import tiny_llama_fp32, tiny_ortgenai, tiny_ovgenai  # noqa: F401
