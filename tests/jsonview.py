"""Typed tests over pi's JSON: a message or entry viewed as the plain JSON it is."""

from __future__ import annotations

from typing import Any


def as_json(value: object) -> Any:
    """``value`` unchanged, typed ``Any``: for assertions that index a message's JSON freely
    (``m["content"][0]["text"]``) where the TypedDict union would need narrowing first."""
    return value
