"""Where an agent session's events go: the iteration of the running prompt and every subscriber.

The running prompt attaches a queue (:meth:`EventBus.attach`) that its ``prompt()`` iteration
drains; subscribers (:meth:`EventBus.subscribe`) receive every event, also those emitted
outside a prompt (a manual compaction, a navigation).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_context.events import AgentEvent


__all__ = ["EventBus"]


class EventBus:
    """Fans each event out to the attached prompt stream and to the subscribers, in order."""

    __slots__ = ("_listeners", "_stream")

    def __init__(self) -> None:
        self._listeners: list[Callable[[AgentEvent], None]] = []
        self._stream: asyncio.Queue[AgentEvent | None] | None = None

    def subscribe(self, callback: Callable[[AgentEvent], None]) -> Callable[[], None]:
        """Add a subscriber; returns the function that removes it."""
        self._listeners.append(callback)

        def unsubscribe() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return unsubscribe

    def attach(self, stream: asyncio.Queue[AgentEvent | None]) -> None:
        """Send events to ``stream`` as well (the running prompt's iteration)."""
        self._stream = stream

    def detach(self, stream: asyncio.Queue[AgentEvent | None]) -> None:
        if self._stream is stream:
            self._stream = None

    def emit(self, event: AgentEvent) -> None:
        if self._stream is not None:
            self._stream.put_nowait(event)
        self.notify_subscribers(event)

    def notify_subscribers(self, event: AgentEvent) -> None:
        """Subscribers only (an event the caller yields itself)."""
        for listener in list(self._listeners):
            listener(event)
