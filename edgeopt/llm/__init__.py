"""Generative models (decoder LLMs): folder kinds, the recipes that export them to runtime folders (docs/llm.md)."""
