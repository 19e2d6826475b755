"""Replay of the system state a transcript carries (pi-ai ``getCurrentSystemMessage``).

The ``context`` event handlers see no system messages; when they change the conversation, the
prompt and tool state is put back as *one* replayed head message. This module computes that
head: ``content`` texts appended, ``sections`` patched by name (``null`` deletes; a re-added
section moves to the end), tools removed then added by name, the first system message's
timestamp.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from pi_context.messages import AgentMessage, SystemMessage, text_of

__all__ = ["current_system_message"]


def current_system_message(messages: Iterable[AgentMessage]) -> SystemMessage | None:
    """The single system message equivalent to all system messages in ``messages``, or ``None``."""
    content: list[str] = []
    sections: dict[str, str] = {}
    tools: dict[str, Any] = {}
    timestamp: int | None = None
    for message in messages:
        if message.get("role") != "system":
            continue
        msg = cast(Mapping[str, Any], message)
        if timestamp is None:
            timestamp = msg.get("timestamp")
        text = text_of(msg.get("content"))
        if text:
            content.append(text)
        for name, value in (msg.get("sections") or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
        for ref in msg.get("toolsRemoved") or ():
            tools.pop(ref.get("name"), None)
        for decl in msg.get("toolsAdded") or ():
            tools[decl["name"]] = decl
    if timestamp is None and not tools:
        return None
    head: dict[str, Any] = {"role": "system", "content": "\n\n".join(content)}
    if sections:
        head["sections"] = sections
    if tools:
        head["toolsAdded"] = list(tools.values())
    head["timestamp"] = timestamp if timestamp is not None else 0
    return cast(SystemMessage, head)
