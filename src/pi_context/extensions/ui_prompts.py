"""``ui_prompt_start`` / ``ui_prompt_end``: the dialogs of ``ctx.ui`` told to extensions.

:class:`PromptWatchingUI` wraps the front end's :class:`~pi_context.extensions.context.ExtensionUI`:
``select``, ``confirm``, ``input`` and ``editor`` are announced before they wait for the user
and after they return. Nested or overlapping dialogs make one waiting span (the events name
the outer one). The handlers run as tasks of the running loop: a dialog never waits for them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar

from pi_context._records import Event
from pi_context.extensions.context import ExtensionUI

__all__ = ["PromptKind", "PromptWatchingUI", "UIPromptEndEvent", "UIPromptStartEvent"]

PromptKind = Literal["select", "confirm", "input", "editor"]
T = TypeVar("T")


@dataclass(slots=True)
class UIPromptStartEvent(Event):
    """A dialog of ``ctx.ui`` starts waiting for the user (``reason`` is always
    ``ui_prompt``). A notification, delivered without holding up the dialog."""

    type: ClassVar[str] = "ui_prompt_start"
    kind: PromptKind
    title: str | None = None
    reason: str = "ui_prompt"


@dataclass(slots=True)
class UIPromptEndEvent(Event):
    """The waiting span that :class:`UIPromptStartEvent` opened is over."""

    type: ClassVar[str] = "ui_prompt_end"
    kind: PromptKind
    title: str | None = None
    reason: str = "ui_prompt"


class PromptWatchingUI:
    """``ui`` with its dialogs announced through ``emit`` (see the module docstring)."""

    def __init__(self, ui: ExtensionUI, emit: Callable[[Event], Coroutine[Any, Any, None]]) -> None:
        self.inner = ui
        self._emit = emit
        self._depth = 0
        self._outer: tuple[PromptKind, str | None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def _announce(self, event: Event) -> None:
        task = asyncio.get_running_loop().create_task(self._emit(event))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _watch(self, kind: PromptKind, title: str | None, dialog: Awaitable[T]) -> T:
        self._depth += 1
        if self._depth == 1:
            self._outer = (kind, title)
            self._announce(UIPromptStartEvent(kind, title or None))
        try:
            return await dialog
        finally:
            self._depth -= 1
            if self._depth == 0:
                outer_kind, outer_title = self._outer or (kind, title)
                self._outer = None
                self._announce(UIPromptEndEvent(outer_kind, outer_title or None))

    async def select(
        self, title: str, options: Sequence[str], *, timeout: float | None = None
    ) -> str | None:
        return await self._watch(
            "select", title, self.inner.select(title, options, timeout=timeout)
        )

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        return await self._watch(
            "confirm", title, self.inner.confirm(title, message, timeout=timeout)
        )

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        return await self._watch(
            "input", title, self.inner.input(title, placeholder, timeout=timeout)
        )

    async def editor(self, title: str, prefill: str | None = None) -> str | None:
        return await self._watch("editor", title, self.inner.editor(title, prefill))

    def notify(self, message: str, notify_type: Any = None) -> None:
        self.inner.notify(message, notify_type)

    def set_status(self, key: str, text: str | None = None) -> None:
        self.inner.set_status(key, text)

    def set_title(self, title: str) -> None:
        self.inner.set_title(title)

    def set_editor_text(self, text: str) -> None:
        self.inner.set_editor_text(text)

    def __getattr__(self, name: str) -> Any:
        # members a front end offers beyond the protocol (e.g. RPC's custom())
        return getattr(self.inner, name)
