"""What the simulator records per request (the bill) and the simulated clock."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Clock", "RequestRecord"]


@dataclass(slots=True)
class Clock:
    """Simulated seconds since the contender's first request (cache lifetimes run on this)."""

    now: float = 0.0

    def advance(self, seconds: float) -> None:
        self.now += max(0.0, seconds)


@dataclass(slots=True)
class RequestRecord:
    """One request as billed: every token of ``input`` is exactly one of read, write, uncached."""

    index: int
    """0-based position of the request in the contender's run."""
    prompt: int
    """The workload prompt it served (-1 when unknown)."""
    kind: str
    """``turn``, ``summary`` or ``overflow`` (rejected: over the context window)."""
    at: float
    """Simulated clock at the request, seconds."""
    input: int
    cache_read: int
    cache_write: int
    uncached: int
    output: int
    hit_from: int | None
    """Index of the earlier request whose cached prefix was read (None: no hit)."""
    cost: float
    """Dollars at the simulator's prices."""
    thinking: str = ""
    """The request's thinking configuration as sent (Anthropic ``thinking``, OpenAI
    ``reasoning_effort``; JSON, empty when absent): a change of it explains a miss."""
    probe: str = ""
    """On the answer to a retention probe, how it was answered: ``context`` (the fact was in
    the request), ``recall`` (found by the recall tool), ``reread`` (read from its file again)
    or ``unknown``; empty on every other request."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
