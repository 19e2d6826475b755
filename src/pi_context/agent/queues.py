"""The steering and follow-up queues: their delivery rules, and the events that announce them.

Two FIFO queues, as pi's agent keeps them:

- **steering** messages are delivered after the current assistant message's tool calls have
  all finished (right after its ``turn_end``), before the next model request; a run that would
  stop takes them first, so they trigger another response;
- **follow-up** messages are delivered only when the agent would otherwise stop (no tool
  calls, no steering).

Each queue has a mode: ``"one-at-a-time"`` (pi's default) hands out one message per delivery
point, ``"all"`` hands out everything queued. The queues also keep the *texts* of queued user
messages for display (``queue_update``, ``clear_queue``, ``pendingMessageCount``): a text
stays listed until a user message with the same text starts (:meth:`MessageQueues.delivered`),
which is how pi matches them. Extension messages are queued without a text (not shown, not
counted).

:class:`MessageQueues` is the rules as pure state: it emits nothing. :class:`PromptQueue`
wraps it with the events pi emits: ``queue_update`` (the complete text lists) when a user
message is queued, when the queues are cleared, and right before a user message whose text is
listed starts (:meth:`PromptQueue.delivered`). Extension messages are queued quietly as
steering.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeGuard

from pi_context.events import MessageStart, QueueUpdate
from pi_context.messages import AgentMessage, text_of

if TYPE_CHECKING:
    from pi_context.events import AgentEvent

__all__ = ["QUEUE_MODES", "MessageQueues", "PromptQueue", "QueueMode", "is_queue_mode"]


QueueMode = Literal["all", "one-at-a-time"]
QUEUE_MODES: tuple[QueueMode, ...] = ("all", "one-at-a-time")


def is_queue_mode(value: object) -> TypeGuard[QueueMode]:
    return value in QUEUE_MODES


# -- the delivery rules ----------------------------------------------------------------------------


class _Queue:
    __slots__ = ("messages", "mode", "texts")

    def __init__(self, mode: QueueMode) -> None:
        self.mode: QueueMode = mode
        self.messages: list[AgentMessage] = []
        self.texts: list[str] = []

    def drain(self) -> list[AgentMessage]:
        if not self.messages:
            return []
        if self.mode == "all":
            taken, self.messages = self.messages, []
            return taken
        return [self.messages.pop(0)]


class MessageQueues:
    """The steering and follow-up queues of one agent session."""

    __slots__ = ("_follow_up", "_steering")

    def __init__(
        self,
        *,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
    ) -> None:
        self._steering = _Queue(steering_mode)
        self._follow_up = _Queue(follow_up_mode)

    # -- modes ----------------------------------------------------------------------------------

    @property
    def steering_mode(self) -> QueueMode:
        return self._steering.mode

    @steering_mode.setter
    def steering_mode(self, mode: QueueMode) -> None:
        self._steering.mode = mode

    @property
    def follow_up_mode(self) -> QueueMode:
        return self._follow_up.mode

    @follow_up_mode.setter
    def follow_up_mode(self, mode: QueueMode) -> None:
        self._follow_up.mode = mode

    # -- queueing -------------------------------------------------------------------------------

    def steer(self, message: AgentMessage, text: str | None = None) -> None:
        """Queue a steering message; ``text`` (a user message's text) is listed for display."""
        self._steering.messages.append(message)
        if text is not None:
            self._steering.texts.append(text)

    def follow_up(self, message: AgentMessage, text: str | None = None) -> None:
        """Queue a follow-up message; ``text`` is listed for display."""
        self._follow_up.messages.append(message)
        if text is not None:
            self._follow_up.texts.append(text)

    # -- delivery -------------------------------------------------------------------------------

    def drain_steering(self) -> list[AgentMessage]:
        """Steering messages for this delivery point (one, or all in ``"all"`` mode)."""
        return self._steering.drain()

    def drain_follow_up(self) -> list[AgentMessage]:
        """Follow-up messages for this delivery point (one, or all in ``"all"`` mode)."""
        return self._follow_up.drain()

    def has_steering(self) -> bool:
        return bool(self._steering.messages)

    def has_follow_up(self) -> bool:
        return bool(self._follow_up.messages)

    def __bool__(self) -> bool:
        return self.has_steering() or self.has_follow_up()

    def delivered(self, text: str) -> bool:
        """A user message with ``text`` starts: unlist the first equal steering text, else the
        first equal follow-up text. Returns whether a listed text was removed."""
        for queue in (self._steering, self._follow_up):
            if text in queue.texts:
                queue.texts.remove(text)
                return True
        return False

    def clear(self) -> tuple[list[str], list[str]]:
        """Forget everything queued; returns the listed ``(steering, follow_up)`` texts."""
        removed = (self._steering.texts, self._follow_up.texts)
        for queue in (self._steering, self._follow_up):
            queue.messages = []
            queue.texts = []
        return removed

    # -- display --------------------------------------------------------------------------------

    def texts(self) -> tuple[list[str], list[str]]:
        """Copies of the listed ``(steering, follow_up)`` texts."""
        return list(self._steering.texts), list(self._follow_up.texts)

    @property
    def pending_count(self) -> int:
        """Listed texts in both queues (pi's ``pendingMessageCount``)."""
        return len(self._steering.texts) + len(self._follow_up.texts)


# -- the announced queues --------------------------------------------------------------------------


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
