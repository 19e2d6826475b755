"""``/fork``: choose the user message to fork before (spec agent-parity §5.3).

The rows are the host's :meth:`~pi_context.cli.app.agent_api.AgentHost.fork_messages` (every user
message of the session file, in file order), the last one selected. Choosing one starts a new
session holding what came before it (the fork engine of
:mod:`pi_context.cli.app.session_replacement`); its text goes back into the editor.
"""

from __future__ import annotations

from collections.abc import Sequence

from pi_context.cli.app.session_replacement import ForkMessage
from pi_context.cli.interactive.pickers.list import (
    Close,
    Outcome,
    PickerKey,
    PickerRow,
    fuzzy_score,
)

__all__ = ["ForkPicker"]


class ForkPicker:
    def __init__(self, messages: Sequence[ForkMessage]) -> None:
        self._messages = list(messages)

    def title(self) -> str:
        return "Fork from which message? (the new session holds what came before it)"

    def rows(self, query: str) -> list[PickerRow[ForkMessage]]:
        listed = self._messages
        if query.strip():
            listed = [m for m in listed if fuzzy_score(query, m.text) is not None]
        return [PickerRow(m, m.text or "(no text)") for m in listed]

    def initial(self, rows: Sequence[PickerRow[ForkMessage]]) -> int:
        return max(len(rows) - 1, 0)

    def choose(self, value: ForkMessage, query: str) -> Outcome[ForkMessage]:
        return Close(value)

    def bindings(self) -> list[PickerKey[ForkMessage]]:
        return []
