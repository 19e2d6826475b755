"""The extension UI sub-protocol of RPC mode.

Dialogs (``select``, ``confirm``, ``input``, ``editor``) write an ``extension_ui_request`` with
a fresh id and wait for the client's ``extension_ui_response`` with that id; a ``timeout``
(milliseconds) resolves with the default (``None`` / ``False``) without an answer, and late or
unknown responses are ignored. Fire-and-forget methods (``notify``, ``setStatus``,
``setWidget``, ``setTitle``, ``set_editor_text``) only write the request. What a terminal UI
could do beyond that has a harmless answer here (``custom`` → ``None``, ``get_editor_text`` →
``""``, ``set_theme`` → refused).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

__all__ = ["RpcExtensionUI"]

NotifyType = Literal["info", "warning", "error"]


class RpcExtensionUI:
    """``ctx.ui`` of extensions when pictx runs in RPC mode."""

    mode = "rpc"
    has_ui = True

    def __init__(
        self,
        send: Callable[[dict[str, Any]], None],
        *,
        ids: Callable[[], str] = lambda: str(uuid.uuid4()),
    ) -> None:
        self._send = send
        self._ids = ids
        self._waiting: dict[str, asyncio.Future[Mapping[str, Any]]] = {}

    # -- client answers ---------------------------------------------------------------------------

    def resolve(self, response: Mapping[str, Any]) -> None:
        """An ``extension_ui_response`` arrived; unknown or late ids are ignored."""
        key = response.get("id")
        future = self._waiting.pop(key, None) if isinstance(key, str) else None
        if future is not None and not future.done():
            future.set_result(response)

    @property
    def pending(self) -> int:
        return len(self._waiting)

    async def _ask(
        self, method: str, fields: dict[str, Any], timeout: float | None
    ) -> Mapping[str, Any] | None:
        key = self._ids()
        future: asyncio.Future[Mapping[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[key] = future
        record: dict[str, Any] = {"type": "extension_ui_request", "id": key, "method": method}
        record.update({k: v for k, v in fields.items() if v is not None})
        if timeout is not None:
            record["timeout"] = timeout
        self._send(record)
        try:
            if timeout is None:
                return await future
            with contextlib.suppress(TimeoutError):
                return await asyncio.wait_for(future, timeout / 1000)
            return None
        finally:
            self._waiting.pop(key, None)

    # -- dialogs ----------------------------------------------------------------------------------

    async def select(
        self, title: str, options: Sequence[str], *, timeout: float | None = None
    ) -> str | None:
        answer = await self._ask("select", {"title": title, "options": list(options)}, timeout)
        return _value(answer)

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        answer = await self._ask("confirm", {"title": title, "message": message}, timeout)
        if answer is None or answer.get("cancelled") is True:
            return False
        return answer.get("confirmed") is True

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        answer = await self._ask("input", {"title": title, "placeholder": placeholder}, timeout)
        return _value(answer)

    async def editor(self, title: str, prefill: str | None = None) -> str | None:
        return _value(await self._ask("editor", {"title": title, "prefill": prefill}, None))

    # -- fire and forget --------------------------------------------------------------------------

    def _tell(self, method: str, fields: dict[str, Any]) -> None:
        record: dict[str, Any] = {
            "type": "extension_ui_request",
            "id": self._ids(),
            "method": method,
        }
        record.update({k: v for k, v in fields.items() if v is not None})
        self._send(record)

    def notify(self, message: str, notify_type: NotifyType | None = None) -> None:
        self._tell("notify", {"message": message, "notifyType": notify_type})

    def set_status(self, key: str, text: str | None = None) -> None:
        self._tell("setStatus", {"statusKey": key, "statusText": text})

    def set_widget(
        self,
        key: str,
        lines: Sequence[str] | None = None,
        placement: Literal["aboveEditor", "belowEditor"] | None = None,
    ) -> None:
        widget = list(lines) if lines is not None else None
        self._tell(
            "setWidget", {"widgetKey": key, "widgetLines": widget, "widgetPlacement": placement}
        )

    def set_title(self, title: str) -> None:
        self._tell("setTitle", {"title": title})

    def set_editor_text(self, text: str) -> None:
        self._tell("set_editor_text", {"text": text})

    paste_to_editor = set_editor_text

    # -- what only a terminal can do ------------------------------------------------------------

    async def custom(self, *_args: Any, **_kwargs: Any) -> None:
        return None

    def get_editor_text(self) -> str:
        return ""

    def get_tools_expanded(self) -> bool:
        return False

    def set_theme(self, _theme: Any) -> dict[str, Any]:
        return {"success": False, "error": "Theme switching not supported in RPC mode"}


def _value(answer: Mapping[str, Any] | None) -> str | None:
    if answer is None or answer.get("cancelled") is True:
        return None
    value = answer.get("value")
    return value if isinstance(value, str) else None
