"""``/fork``: choose the user message to fork before (spec agent-parity §5.3).

Every user message of the session file is listed, oldest first, the last one selected.
Choosing one starts a new session holding what came before it; its text goes back into the
editor. With none: ``No messages to fork from``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pi_context.cli.list_picker import Close, Outcome, PickerKey, PickerRow, fuzzy_score
from pi_context.export.document import text_of_content
from pi_context.session.entries import Entry

__all__ = ["NO_FORK_MESSAGES", "ForkMessage", "ForkPicker", "fork_messages"]

NO_FORK_MESSAGES = "No messages to fork from"


@dataclass(frozen=True, slots=True)
class ForkMessage:
    entry_id: str
    parent_id: str | None
    text: str


def fork_messages(entries: Iterable[Entry]) -> list[ForkMessage]:
    """Every user message of the file, in file order (pi's ``get_fork_messages``)."""
    found = []
    for entry in entries:
        message = entry.message
        if entry.type == "message" and message is not None and message.get("role") == "user":
            text = text_of_content(message.get("content"))
            found.append(ForkMessage(entry.id, entry.parent_id, text))
    return found


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
