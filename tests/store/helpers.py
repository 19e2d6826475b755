"""Builders shared by the store tests."""

from __future__ import annotations

from typing import Any


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
