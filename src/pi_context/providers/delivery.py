"""Turning a projected transcript into what a provider receives, keeping the cached prefix stable.

A request's messages may hold system messages anywhere: the first carries the whole prompt as
``sections``, later ones carry patches (changed sections, ``null`` for removed ones, tool
deltas). How they reach the wire is the :data:`SystemDelivery` mode:

``in_place``
    The leading system message is rendered in full (pi's ``getSystemMessageText``); every later
    system message stays where it is, rendered as an update ("Updated system prompt section ...").
    Earlier bytes never change, so each request extends the previous one. pi does this for
    models that accept system messages mid-conversation.
``user_turn``
    The same, but updates travel as user-side text (for APIs with one system prompt, such as
    Anthropic's ``system`` parameter, and for chat templates that reject late system messages).
    The leading prompt stays byte-identical, so the prefix cache survives a patch.
``collapse``
    pi's fallback: one leading replayed prompt, later system messages dropped. Any patch
    rewrites the head of the request, a cache miss once per prompt change.

:func:`plan_delivery` produces the wire-neutral :class:`Delivery`; the adapters map it to their
JSON. Replaying the system messages is the prompt layer's job (:mod:`pi_context.prompt.replay`:
the sections, the patches and pi's update text); this module only decides where the replayed
text goes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TypeAlias, cast

from msgspec import Struct, field

from pi_context import _json
from pi_context.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolDeclaration,
    ToolResultMessage,
    UserContent,
    text_of,
)
from pi_context.model import SystemDelivery
from pi_context.prompt.replay import (
    get_current_system_message,
    get_current_tools,
    render_system_message_update,
)

__all__ = [
    "IMAGE_OMITTED",
    "TOOL_IMAGE_OMITTED",
    "Delivery",
    "DeliveryItem",
    "SystemUpdate",
    "normalize_transcript",
    "omit_images",
    "plan_delivery",
    "sanitize_tool_id",
    "tool_arguments_json",
    "user_blocks",
]

NO_RESULT_TEXT = "No result provided"

IMAGE_OMITTED = "(image omitted: model does not support images)"
TOOL_IMAGE_OMITTED = "(tool image omitted: model does not support images)"


_TOOL_ID_BAD = re.compile(r"[^A-Za-z0-9_-]")


def sanitize_tool_id(call_id: str, max_len: int = 64) -> str:
    """A tool-call id that strict APIs accept (``[A-Za-z0-9_-]``, bounded), deterministically."""
    clean = _TOOL_ID_BAD.sub("_", call_id) or "call"
    if len(clean) <= max_len and clean == call_id:
        return clean
    if len(clean) > max_len:
        digest = hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        clean = clean[: max_len - 13] + "_" + digest
    return clean


def normalize_transcript(messages: Sequence[Message]) -> list[Message]:
    """Make a transcript acceptable to strict APIs without changing what came before.

    * Assistant messages that failed (``error``/``aborted``) are left out with their results:
      they were never a real turn.
    * Tool results whose call is not in the transcript are left out.
    * A tool call without a result before the next assistant or user message (or the end)
      gets a synthetic error result, so every ``tool_use`` is answered.

    The output depends only on the messages before each point plus the next user/assistant
    message, so a transcript that only grows keeps a stable converted prefix.
    """
    out: list[Message] = []
    dropped_calls: set[str] = set()
    open_calls: list[ToolCall] = []
    answered: set[str] = set()
    known_calls: set[str] = set()

    def close_open() -> None:
        for call in open_calls:
            if call["id"] not in answered:
                result: ToolResultMessage = {
                    "role": "toolResult",
                    "toolCallId": call["id"],
                    "toolName": call["name"],
                    "content": [{"type": "text", "text": NO_RESULT_TEXT}],
                    "isError": True,
                    "timestamp": 0,
                }
                out.append(result)
        open_calls.clear()
        answered.clear()

    for message in messages:
        role = message["role"]
        if role == "assistant":
            assistant = cast(AssistantMessage, message)
            close_open()
            calls = [b for b in assistant["content"] if b["type"] == "toolCall"]
            if assistant.get("stopReason") in ("error", "aborted"):
                dropped_calls.update(c["id"] for c in calls)
                continue
            out.append(message)
            for block in calls:
                call = block
                open_calls.append(call)
                known_calls.add(call["id"])
        elif role == "toolResult":
            result_msg = cast(ToolResultMessage, message)
            call_id = result_msg["toolCallId"]
            if call_id in dropped_calls or call_id not in known_calls or call_id in answered:
                continue
            if not any(c["id"] == call_id for c in open_calls):
                continue
            answered.add(call_id)
            out.append(message)
        elif role == "user":
            close_open()
            out.append(message)
        else:
            out.append(message)
    close_open()
    return out


def _placeholders(content: Sequence[UserContent], note: str) -> list[UserContent]:
    out: list[UserContent] = []
    for block in content:
        if block["type"] == "image":
            if not (out and out[-1]["type"] == "text" and out[-1]["text"] == note):
                out.append(cast(TextContent, {"type": "text", "text": note}))
        else:
            out.append(block)
    return out


def omit_images(messages: Sequence[Message]) -> list[Message]:
    """The transcript for a model without image input (pi's ``transformMessages``): each run
    of images in a user message becomes ``(image omitted: ...)``, in a tool result
    ``(tool image omitted: ...)``. The stored messages keep their images."""
    out: list[Message] = []
    for message in messages:
        role = message["role"]
        content = message.get("content")
        if role in ("user", "toolResult") and isinstance(content, list):
            blocks = cast(list[UserContent], content)
            if any(block["type"] == "image" for block in blocks):
                note = IMAGE_OMITTED if role == "user" else TOOL_IMAGE_OMITTED
                message = cast(Message, {**message, "content": _placeholders(blocks, note)})
        out.append(message)
    return out


class SystemUpdate(Struct, frozen=True):
    """A later system message, rendered for in-place delivery."""

    text: str
    message: SystemMessage


DeliveryItem: TypeAlias = Message | SystemUpdate


class Delivery(Struct, frozen=True):
    """A request ready for an adapter: the leading prompt, the items after it, the tools.

    ``lead_parts`` names every part of the leading prompt (``system_prompt``, ``content``, then
    one per section) with its text, in order, for cache fingerprints.
    """

    mode: SystemDelivery
    system: str | None
    items: list[DeliveryItem] = field(default_factory=list)
    tools: list[ToolDeclaration] = field(default_factory=list)
    lead_parts: list[tuple[str, str]] = field(default_factory=list)


def _lead_parts(message: SystemMessage) -> list[tuple[str, str]]:
    parts: list[tuple[str, str]] = []
    raw = message.get("content")
    content = raw if isinstance(raw, str) else text_of(raw or [], "\n")
    if content:
        parts.append(("content", content))
    for name, value in (message.get("sections") or {}).items():
        if value:
            parts.append((name, value))
    return parts


def plan_delivery(
    messages: Sequence[Message],
    *,
    mode: SystemDelivery,
    system_prompt: str | None = None,
    tools: Sequence[ToolDeclaration] = (),
    images: bool = True,
) -> Delivery:
    """Split a transcript into leading prompt + items for ``mode`` (see the module docstring).

    ``tools`` are the declarations to send; when empty, the transcript's replayed declarations
    are used (tools keep the order in which they were first declared, so the list is stable).
    ``images`` false (a model without image input): images become text notes
    (:func:`omit_images`).
    """
    normalized = normalize_transcript(messages if images else omit_images(messages))
    declared = list(tools) if tools else list(get_current_tools(normalized).values())
    lead_parts: list[tuple[str, str]] = []
    if system_prompt:
        lead_parts.append(("system_prompt", system_prompt))
    items: list[DeliveryItem] = []
    if mode == "collapse":
        state = get_current_system_message(normalized)
        if state is not None:
            lead_parts.extend(_lead_parts(state))
        items.extend(m for m in normalized if m["role"] != "system")
    else:
        rest: Sequence[Message] = normalized
        if normalized and normalized[0]["role"] == "system":
            lead_parts.extend(_lead_parts(normalized[0]))
            rest = normalized[1:]
        for message in rest:
            if message["role"] == "system":
                system = message
                text = render_system_message_update(system)
                if text:
                    items.append(SystemUpdate(text, system))
            else:
                items.append(message)
    lead = "\n\n".join(text for _, text in lead_parts) or None
    return Delivery(mode=mode, system=lead, items=items, tools=declared, lead_parts=lead_parts)


def user_blocks(content: str | Sequence[UserContent]) -> list[UserContent]:
    """User content as a list of blocks (a string becomes one text block), empties dropped."""
    if isinstance(content, str):
        return [cast(TextContent, {"type": "text", "text": content})] if content else []
    return [b for b in content if b["type"] != "text" or b["text"]]


def tool_arguments_json(call: ToolCall) -> str:
    """Tool-call arguments as pi writes them (``JSON.stringify``), stable across requests."""
    return _json.js_stringify(call.get("arguments") or {})
