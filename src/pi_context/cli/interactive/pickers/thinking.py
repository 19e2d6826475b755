"""``/thinking [level]``: set the thinking level directly, or pick one (spec agent-parity §3.2).

``/thinking <level>`` matches the model's supported levels exactly, ignoring case, and sets it
for this session; an unknown level says ``Unknown thinking level "<x>". Available levels:
<a, b, …>.``. Without an argument a picker lists the supported levels (the current one
selected): Enter sets it for the session, Ctrl+S also saves it as ``defaultThinkingLevel``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pi_context.cli.interactive.pickers.list import Close, Outcome, PickerKey, PickerRow, Stay

__all__ = ["LevelPick", "ThinkingPicker", "match_thinking_level", "unknown_level_message"]


def match_thinking_level(supported: Sequence[str], text: str) -> str | None:
    """The supported level ``text`` names (case-insensitive), else ``None``."""
    wanted = text.strip().lower()
    return next((level for level in supported if level.lower() == wanted), None)


def unknown_level_message(supported: Sequence[str], text: str) -> str:
    return f'Unknown thinking level "{text}". Available levels: {", ".join(supported)}.'


@dataclass(frozen=True, slots=True)
class LevelPick:
    level: str
    save: bool = False


class ThinkingPicker:
    def __init__(self, supported: Sequence[str], current: str) -> None:
        self._supported = list(supported)
        self._current = current

    def title(self) -> str:
        return f"Thinking level (now {self._current})"

    def rows(self, query: str) -> list[PickerRow[LevelPick]]:
        wanted = query.strip().lower()
        return [
            PickerRow(LevelPick(level), level, note="current" if level == self._current else "")
            for level in self._supported
            if wanted in level
        ]

    def initial(self, rows: Sequence[PickerRow[LevelPick]]) -> int:
        return next((i for i, row in enumerate(rows) if row.value.level == self._current), 0)

    def choose(self, value: LevelPick, query: str) -> Outcome[LevelPick]:
        return Close(value)

    def _save(self, value: LevelPick | None, _query: str) -> Outcome[LevelPick]:
        return Stay() if value is None else Close(LevelPick(value.level, save=True))

    def bindings(self) -> list[PickerKey[LevelPick]]:
        return [PickerKey(("c-s",), "Ctrl+S", "set and save as default", self._save)]
