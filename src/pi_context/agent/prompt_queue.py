"""Messages waiting for the busy run: prompts sent while it runs and extension messages.

They are delivered before the run's next request (or as a follow-up run once it settles);
every change that empties or fills the queue is announced with a ``queue_update`` event.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_context.events import AgentEvent, QueueUpdate
from pi_context.messages import AgentMessage, text_of

__all__ = ["PromptQueue"]


class PromptQueue:
    """An ordered list of waiting messages that reports its changes."""

    __slots__ = ("_emit", "_messages")

    def __init__(self, emit: Callable[[AgentEvent], None]) -> None:
        self._emit = emit
        self._messages: list[AgentMessage] = []

    def __bool__(self) -> bool:
        return bool(self._messages)

    def add(self, message: AgentMessage) -> None:
        """Queue quietly (extension messages wait for the next turn without an update)."""
        self._messages.append(message)

    def add_prompt(self, message: AgentMessage) -> QueueUpdate:
        """Queue a user prompt and announce the waiting texts; returns the announcement."""
        self._messages.append(message)
        update = QueueUpdate(steering=[_text(m) for m in self._messages])
        self._emit(update)
        return update

    def take(self) -> list[AgentMessage]:
        """Everything waiting, in order; the queue is empty afterwards."""
        taken, self._messages = self._messages, []
        if taken:
            self._emit(QueueUpdate())
        return taken

    def drop(self) -> None:
        """Forget what waits (the run it waited for was aborted)."""
        if self._messages:
            self._messages.clear()
            self._emit(QueueUpdate())


def _text(message: AgentMessage) -> str:
    content: Any = message.get("content")
    return text_of(content) if isinstance(content, str | list) else ""
