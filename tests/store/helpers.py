"""Builders shared by the store tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pi_context.errors import StoreUnavailableError
from pi_context.session.entries import Entry
from pi_context.store import MemoryStore, SessionRef
from pi_context.store.base import ANY_LEAF, AppendResult, _AnyLeaf

CONFORMANCE_SESSIONS = sorted(
    (Path(__file__).parents[1] / "data" / "conformance" / "sessions").glob("*/*.jsonl")
)
"""Every session file of the conformance data (pi 1.6.0's inputs), the damaged ones too."""


def message(entry_id: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    """A message entry (text ``text``, in role ``role``) as pi writes it."""
    body: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}]}
    if role == "assistant":
        body.update(
            api="openai-completions",
            provider="test",
            model="m",
            usage={
                "input": 1,
                "output": 1,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 2,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            stopReason="stop",
        )
    body["timestamp"] = 1735689600000
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2025-01-01T00:00:00.000Z",
        "message": body,
    }


class FlakyStore(MemoryStore):
    """A memory store whose next appends fail: before storing (``lose``) or after storing,
    the acknowledgement lost (``lose_ack``)."""

    def __init__(self) -> None:
        super().__init__()
        self.fail: list[str] = []
        self.batches: list[list[str]] = []

    async def append(
        self,
        ref: SessionRef,
        entries: Sequence[Mapping[str, Any] | Entry],
        *,
        if_leaf: str | _AnyLeaf | None = ANY_LEAF,
    ) -> AppendResult:
        self.batches.append([e.id if isinstance(e, Entry) else str(e["id"]) for e in entries])
        mode = self.fail.pop(0) if self.fail else None
        if mode == "lose":
            raise StoreUnavailableError("connection lost before the append")
        result = await super().append(ref, entries, if_leaf=if_leaf)
        if mode == "lose_ack":
            raise StoreUnavailableError("connection lost after the append")
        return result
