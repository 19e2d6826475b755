"""Helpers shared by the adapter tests: tracking clients to close, and a one-line request."""

from __future__ import annotations

from typing import Any, TypeVar

from pi_context.messages import user_message
from pi_context.model import ModelRequest

__all__ = ["OPEN", "ask", "track"]

A = TypeVar("A")

OPEN: list[Any] = []
"""Adapters created by the running test; the ``providers`` conftest closes them afterwards."""


def track(adapter: A) -> A:
    """Register ``adapter`` so its HTTP client is closed when the test ends."""
    OPEN.append(adapter)
    return adapter


def ask(text: str = "hi") -> ModelRequest:
    """A request holding one user message."""
    return ModelRequest(messages=[user_message(text, timestamp=1)])
