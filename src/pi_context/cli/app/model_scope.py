"""``--models`` / the ``enabledModels`` setting: the models Ctrl+P cycles through.

Patterns are resolved against the available (keyed) models, deduplicated, in pattern order.
A pattern with ``*``, ``?`` or ``[`` is a case-insensitive glob over ``provider/id`` or ``id``
(an optional ``:<level>`` suffix split off first); any other pattern resolves as ``--model``
does. Problems are warnings, never fatal. Cycling moves to the next (or previous) entry,
wrapping; a current model outside the list moves to the first (or last).
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Any

from msgspec import Struct

from pi_context.errors import PiContextError
from pi_context.model.thinking import parse_thinking_level

__all__ = ["ScopeEntry", "next_model_key", "resolve_scope"]


class ScopeEntry(Struct, frozen=True):
    key: str
    """``provider/id``."""
    level: str | None = None
    """The pattern's explicit ``:<level>``, used when cycling to this model."""


def _split_level(pattern: str) -> tuple[str, str | None]:
    base, sep, suffix = pattern.rpartition(":")
    if sep and base and parse_thinking_level(suffix) is not None:
        return base, suffix
    return pattern, None


def resolve_scope(patterns: Sequence[str], registry: Any) -> tuple[list[ScopeEntry], list[str]]:
    """``(entries, warnings)`` for the patterns, over ``registry``'s available models."""
    available = registry.available()
    scope: list[ScopeEntry] = []
    warnings: list[str] = []
    seen: set[str] = set()

    def add(key: str, level: str | None) -> None:
        if key not in seen:
            seen.add(key)
            scope.append(ScopeEntry(key, level))

    for pattern in patterns:
        text, level = _split_level(pattern)
        if any(c in text for c in "*?["):
            exact = [e for e in available if e.info.id == text or e.key == text]
            glob = text.lower()
            found = exact or [
                e
                for e in available
                if fnmatchcase(e.key.lower(), glob) or fnmatchcase(e.info.id.lower(), glob)
            ]
            if not found:
                warnings.append(f'No models match pattern "{pattern}"')
            for entry in found:
                add(entry.key, level)
            continue
        try:
            resolution = registry.lookup(text)
        except PiContextError:
            warnings.append(f'No models match pattern "{pattern}"')
            continue
        if not registry.is_available(resolution.entry):
            warnings.append(f'No models match pattern "{pattern}"')
            continue
        add(resolution.entry.key, level or resolution.thinking_level)
    return scope, warnings


def next_model_key(keys: Sequence[str], current: str | None, *, forward: bool = True) -> str | None:
    """The model to cycle to, or ``None`` when there is nowhere to go."""
    if not keys:
        return None
    if current not in keys:
        return keys[0] if forward else keys[-1]
    if len(keys) == 1:
        return None
    at = keys.index(current)
    return keys[(at + (1 if forward else -1)) % len(keys)]
