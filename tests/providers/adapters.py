"""Helpers shared by the adapter tests: tracking clients to close, and a one-line request."""

from __future__ import annotations

from typing import Any, TypeVar

from pi_context.messages import user_message
from pi_context.model import ModelRequest

__all__ = ["OPEN", "PI_USAGE", "ask", "assert_pi_usage_keys", "track"]

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


PI_USAGE: dict[str, Any] = {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "reasoning": 0,
    "totalTokens": 0,
    "cost": {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "total": 0,
        "totalFromProvider": False,
    },
}
"""The keys of a final usage record as pi-ai 1.6.0 writes it for every adapter (recorded from
pi's session file): ``reasoning`` is 0 when the provider reports none and
``cost.totalFromProvider`` false when the cost was computed from prices."""


def assert_pi_usage_keys(usage: Any) -> None:
    """Every key pi writes is there (``cacheWrite1h`` may be added, as pi-ai does for it)."""
    missing = [k for k in PI_USAGE if k not in usage]
    missing += [f"cost.{k}" for k in PI_USAGE["cost"] if k not in usage["cost"]]
    assert not missing, f"usage lacks what pi writes: {missing}"
    assert set(usage) - {"cacheWrite1h"} == set(PI_USAGE)
    assert set(usage["cost"]) == set(PI_USAGE["cost"])
    assert usage["cost"]["totalFromProvider"] is False
