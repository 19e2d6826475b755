"""Which thinking level a session uses: at startup, on resume and when the model changes.

pi's rules, as pure functions of the settings and the model; the
levels themselves, support and clamping are :mod:`pi_context.model.thinking`'s.

* **new session**: the requested level (``--thinking``) > settings
  ``modelThinkingLevels["<provider>/<id>"]`` > settings ``defaultThinkingLevel`` > ``medium``;
* **resumed session**: the requested level > the branch's last ``thinking_level_change`` >
  ``defaultThinkingLevel`` > ``medium``;
* **model switch**: the scope entry's explicit level > ``modelThinkingLevels`` for the target >
  ``defaultThinkingLevel`` > the current level > ``medium``.

Every result is clamped to the model; without a model the level is ``off``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pi_context.messages import ThinkingLevel
from pi_context.model import ModelInfo
from pi_context.model.thinking import DEFAULT_THINKING_LEVEL, clamp_thinking_level
from pi_context.session.entries import Entry

__all__ = [
    "recorded_thinking_level",
    "startup_thinking_level",
    "switch_thinking_level",
    "thinking_budgets",
]


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _per_model(settings: Mapping[str, Any], info: ModelInfo) -> str | None:
    table = settings.get("modelThinkingLevels")
    if not isinstance(table, Mapping):
        return None
    return _text(table.get(f"{info.provider}/{info.id}"))


def recorded_thinking_level(branch: Sequence[Entry]) -> str | None:
    """The level of the last ``thinking_level_change`` on ``branch``, else ``None``."""
    for entry in reversed(branch):
        if entry.type == "thinking_level_change":
            level = _text(entry.get("thinkingLevel"))
            if level is not None:
                return level
    return None


def startup_thinking_level(
    settings: Mapping[str, Any],
    info: ModelInfo | None,
    *,
    requested: str | None = None,
    recorded: str | None = None,
    resumed: bool = False,
) -> ThinkingLevel:
    """The level a new (``resumed=False``) or resumed session starts with."""
    if info is None:
        return "off"
    default = _text(settings.get("defaultThinkingLevel"))
    if resumed:
        wanted = requested or recorded or default
    else:
        wanted = requested or _per_model(settings, info) or default
    return clamp_thinking_level(info, wanted or DEFAULT_THINKING_LEVEL)


def switch_thinking_level(
    settings: Mapping[str, Any],
    info: ModelInfo,
    *,
    current: str,
    scoped: str | None = None,
) -> ThinkingLevel:
    """The level after switching to the model ``info`` (``scoped``: the explicit level of the
    ``--models`` entry cycled to)."""
    default = _text(settings.get("defaultThinkingLevel"))
    wanted = scoped or _per_model(settings, info) or default or _text(current)
    return clamp_thinking_level(info, wanted or DEFAULT_THINKING_LEVEL)


def thinking_budgets(settings: Mapping[str, Any]) -> dict[str, int] | None:
    """Settings ``thinkingBudgets`` (level → token budget), the positive integers only."""
    table = settings.get("thinkingBudgets")
    if not isinstance(table, Mapping):
        return None
    budgets = {
        str(level): int(tokens)
        for level, tokens in table.items()
        if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0
    }
    return budgets or None
