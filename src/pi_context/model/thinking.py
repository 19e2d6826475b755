"""Thinking levels: which a model supports, and clamping a requested level to them.

pi orders the levels ``off < minimal < low < medium < high < xhigh < max``. A model without
``reasoning`` supports only ``off``. Otherwise every level is supported except those its
``thinking_level_map`` maps to ``None``; ``xhigh`` and ``max`` exist only where the map gives
them a provider value. Clamping keeps a supported level, turns an unknown text into the first
supported level, and otherwise moves to the nearest supported level above, else below.

These are pure functions of :class:`~pi_context.model.ModelInfo`; the agent clamps once when a
level is chosen and every adapter clamps again before mapping the level onto its request.
"""

from __future__ import annotations

from pi_context.messages import ThinkingLevel
from pi_context.model.protocol import ModelInfo

__all__ = [
    "DEFAULT_THINKING_LEVEL",
    "THINKING_LEVELS",
    "clamp_thinking_level",
    "cycle_thinking_level",
    "parse_thinking_level",
    "provider_thinking_value",
    "supported_thinking_levels",
]

THINKING_LEVELS: tuple[ThinkingLevel, ...] = (
    "off",
    "minimal",
    "low",
    "medium",
    "high",
    "xhigh",
    "max",
)
DEFAULT_THINKING_LEVEL: ThinkingLevel = "medium"

_MAPPED_ONLY = ("xhigh", "max")


def parse_thinking_level(text: str) -> ThinkingLevel | None:
    """``text`` as a level (exact, lower case, as pi's ``--thinking``), else ``None``."""
    return text if text in THINKING_LEVELS else None


def supported_thinking_levels(info: ModelInfo | None) -> tuple[ThinkingLevel, ...]:
    """The levels ``info`` accepts, in level order (``("off",)`` for non-reasoning models and
    without a model)."""
    if info is None or not info.reasoning:
        return ("off",)
    mapping = info.thinking_level_map
    supported: list[ThinkingLevel] = []
    for level in THINKING_LEVELS:
        if level in mapping and mapping[level] is None:
            continue
        if level in _MAPPED_ONLY and mapping.get(level) is None:
            continue
        supported.append(level)
    return tuple(supported)


def clamp_thinking_level(info: ModelInfo | None, level: str) -> ThinkingLevel:
    """The level ``info`` will use for a requested ``level`` (pi's ``clampThinkingLevel``):
    itself when supported, the first supported one when unknown, else the nearest supported
    above, then below (``off`` without a model)."""
    supported = supported_thinking_levels(info)
    if level in supported:
        return level
    if level not in THINKING_LEVELS:
        return supported[0] if supported else "off"
    at = THINKING_LEVELS.index(level)
    for above in THINKING_LEVELS[at + 1 :]:
        if above in supported:
            return above
    for below in reversed(THINKING_LEVELS[:at]):
        if below in supported:
            return below
    return "off"


def provider_thinking_value(info: ModelInfo, level: ThinkingLevel) -> str | None:
    """The provider's own value for ``level`` when the model's map gives one, else ``None``."""
    value = info.thinking_level_map.get(level)
    return value if isinstance(value, str) else None


def cycle_thinking_level(info: ModelInfo | None, current: str) -> ThinkingLevel | None:
    """The level after ``current`` in the model's supported list, wrapping (pi's cycle key).

    ``None`` for a model without reasoning or no model (pi leaves the level alone and says the model does
    not support thinking); a current level not in the list moves to the first supported one.
    """
    if info is None or not info.reasoning:
        return None
    supported = supported_thinking_levels(info)
    if current not in supported:
        return supported[0]
    return supported[(supported.index(current) + 1) % len(supported)]
