"""Runners carry a request to the device agent and bring its raw result back.

Local and remote runners differ only in transport: both run the same agent with the same JSON request. The
contract every runner meets is :class:`Runner` (``tests/contract/test_runners.py`` checks it).
"""

from .base import AgentCommand, AgentError, ProgressSink, Runner, RunnerInfo, RunnerKind, raise_for_error
from .local import LocalRunner

__all__ = ["AgentCommand", "AgentError", "LocalRunner", "ProgressSink", "Runner", "RunnerInfo", "RunnerKind",
           "raise_for_error"]
