"""The session's steering and follow-up queues, announcing each change with ``queue_update``.

:class:`PromptQueue` wraps the pure :class:`~.queues.MessageQueues` (the delivery rules) with
the events pi emits: ``queue_update`` (the complete text lists) when a user message is queued,
when the queues are cleared, and right before a user message whose text is listed starts
(:meth:`PromptQueue.delivered`). Extension messages are queued quietly as steering.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_context.events import MessageStart, QueueUpdate
from pi_context.messages import AgentMessage, text_of

from .queues import MessageQueues, QueueMode

if TYPE_CHECKING:
    from pi_context.events import AgentEvent

__all__ = ["PromptQueue"]


class PromptQueue:
    """Steering and follow-up messages waiting for a run, and their announcements."""

    __slots__ = ("_emit", "_queues")

    def __init__(self, emit: Callable[[AgentEvent], None]) -> None:
        self._emit = emit
        self._queues = MessageQueues()

    def __bool__(self) -> bool:
        return bool(self._queues)

    # -- modes ----------------------------------------------------------------------------------

    @property
    def steering_mode(self) -> QueueMode:
        return self._queues.steering_mode

    @steering_mode.setter
    def steering_mode(self, mode: QueueMode) -> None:
        self._queues.steering_mode = mode

    @property
    def follow_up_mode(self) -> QueueMode:
        return self._queues.follow_up_mode

    @follow_up_mode.setter
    def follow_up_mode(self, mode: QueueMode) -> None:
        self._queues.follow_up_mode = mode

    # -- queueing -------------------------------------------------------------------------------

    def add(self, message: AgentMessage) -> None:
        """An extension message: steering, not listed, not announced."""
        self._queues.steer(message)

    def steer(self, message: AgentMessage) -> QueueUpdate:
        """Queue a user message as steering and announce the lists; returns the announcement."""
        self._queues.steer(message, _text(message))
        return self.announce()

    def follow_up(self, message: AgentMessage) -> QueueUpdate:
        """Queue a user message as a follow-up and announce the lists."""
        self._queues.follow_up(message, _text(message))
        return self.announce()

    def clear(self) -> tuple[list[str], list[str]]:
        """Forget everything queued (announced); returns the removed texts."""
        removed = self._queues.clear()
        self.announce()
        return removed

    # -- delivery -------------------------------------------------------------------------------

    def take_steering(self) -> list[AgentMessage]:
        return self._queues.drain_steering()

    def take_follow_up(self) -> list[AgentMessage]:
        return self._queues.drain_follow_up()

    def take(self) -> list[AgentMessage]:
        """What a continuation starts with (after a retry, a compaction, a settled run):
        steering first, else follow-ups."""
        return self._queues.drain_steering() or self._queues.drain_follow_up()

    def delivered(self, event: AgentEvent) -> None:
        """Before ``event`` is emitted: a starting user message whose text is listed is
        unlisted and the shorter lists are announced first, as pi does."""
        if (
            isinstance(event, MessageStart)
            and event.message.get("role") == "user"
            and self._queues.delivered(_text(event.message))
        ):
            self.announce()

    # -- display --------------------------------------------------------------------------------

    def texts(self) -> tuple[list[str], list[str]]:
        return self._queues.texts()

    @property
    def pending_count(self) -> int:
        return self._queues.pending_count

    def announce(self) -> QueueUpdate:
        steering, follow_up = self._queues.texts()
        update = QueueUpdate(steering=steering, follow_up=follow_up)
        self._emit(update)
        return update


def _text(message: AgentMessage) -> str:
    content: Any = message.get("content")
    return text_of(content) if isinstance(content, str | list) else ""
