"""The delivery rules of the steering and follow-up queues: pure state, no events.

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

The class is pure state: it emits nothing. The session turns :meth:`MessageQueues.texts` into
``queue_update`` events at the points pi does.
"""

from __future__ import annotations

from typing import Literal, TypeGuard

from pi_context.messages import AgentMessage

__all__ = ["QUEUE_MODES", "MessageQueues", "QueueMode", "is_queue_mode"]

QueueMode = Literal["all", "one-at-a-time"]
QUEUE_MODES: tuple[QueueMode, ...] = ("all", "one-at-a-time")


def is_queue_mode(value: object) -> TypeGuard[QueueMode]:
    return value in QUEUE_MODES


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
