"""Runners carry a request to the device agent and bring its raw result back.

Local and remote runners differ only in transport: both run the same agent with the same JSON request.
"""

from .base import AgentError, ProgressSink, Runner, raise_for_error
from .local import LocalRunner

__all__ = ["AgentError", "LocalRunner", "ProgressSink", "Runner", "raise_for_error"]
