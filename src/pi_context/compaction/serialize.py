"""The transcript text a summarizer reads (pi's ``serializeConversation``), exactly.

Input is the provider view of the messages (after ``convert_to_llm``): summary, custom and bash
messages have already become user text. Each message becomes one part:

* ``[User]: `` + the text blocks joined with no separator (images ignored);
* ``[Assistant]: `` + text blocks joined with ``\\n`` (whenever a text block exists, even empty),
  then ``[Assistant tool calls]: `` + ``name(k=<JSON>, ...)`` joined with ``"; "``; thinking is
  never shown to the summarizer;
* ``[Tool result]: `` + text truncated to 2000 UTF-16 units plus a note of what was cut;
* system and unknown roles: nothing.

Parts are joined with a blank line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from pi_context import _json

__all__ = [
    "TOOL_RESULT_MAX_CHARS",
    "format_tool_call",
    "js_object_entries",
    "serialize_conversation",
    "truncate_for_summary",
]

TOOL_RESULT_MAX_CHARS: Final = 2000

_ARRAY_INDEX = re.compile(r"^(?:0|[1-9][0-9]{0,9})$")
_MAX_ARRAY_INDEX = 2**32 - 2


def _is_index(key: str) -> bool:
    return bool(_ARRAY_INDEX.match(key)) and int(key) <= _MAX_ARRAY_INDEX


def js_object_entries(value: Any) -> list[tuple[str, Any]]:
    """``Object.entries(value)``: integer-like keys first (ascending), then insertion order.

    Strings and lists enumerate per index, as JavaScript does; ``None`` has no entries (pi throws
    a ``TypeError`` there; we print an empty call instead).
    """
    if isinstance(value, Mapping):
        keys = [str(k) for k in value]
        index_keys = sorted((k for k in keys if _is_index(k)), key=int)
        ordered = index_keys + [k for k in keys if not _is_index(k)]
        return [(k, value[k]) for k in ordered]
    if isinstance(value, str):
        units = _utf16_units(value)
        return [(str(i), u) for i, u in enumerate(units)]
    if isinstance(value, list | tuple):
        return [(str(i), v) for i, v in enumerate(value)]
    return []


def _utf16_units(text: str) -> list[str]:
    """The string split into UTF-16 code units (astral characters give two lone surrogates)."""
    if text.isascii():
        return list(text)
    data = text.encode("utf-16-le", errors="surrogatepass")
    return [
        data[i : i + 2].decode("utf-16-le", errors="surrogatepass") for i in range(0, len(data), 2)
    ]


def format_tool_call(name: str, arguments: Any) -> str:
    """``name(k=JSON.stringify(v), ...)`` with JavaScript key order."""
    args = ", ".join(f"{k}={_json.js_stringify(v)}" for k, v in js_object_entries(arguments))
    return f"{name}({args})"


def truncate_for_summary(text: str, limit: int = TOOL_RESULT_MAX_CHARS) -> str:
    """Keep ``limit`` UTF-16 units (one less when that would split a surrogate pair) and note the rest.

    The note counts ``length - limit`` even when one more unit was dropped, as pi does.
    """
    length = _json.utf16_len(text)
    if length <= limit:
        return text
    data = text.encode("utf-16-le", errors="surrogatepass")
    head = data[: limit * 2]
    last = int.from_bytes(head[-2:], "little")
    if 0xD800 <= last <= 0xDBFF:
        head = head[:-2]
    kept = head.decode("utf-16-le", errors="surrogatepass")
    return f"{kept}\n\n[... {length - limit} more characters truncated]"


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        block["text"]
        for block in content
        if isinstance(block, Mapping)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]


def _serialize_one(message: Mapping[str, Any]) -> Iterable[str]:
    role = message.get("role")
    content = message.get("content")
    if role == "user":
        text = "".join(_texts(content))
        if text:
            yield f"[User]: {text}"
    elif role == "assistant":
        blocks: Sequence[Any] = content if isinstance(content, list) else []
        texts: list[str] = []
        calls: list[str] = []
        has_text = False
        for block in blocks:
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if kind == "text":
                has_text = True
                texts.append(str(block.get("text", "")))
            elif kind == "toolCall":
                calls.append(format_tool_call(str(block.get("name", "")), block.get("arguments")))
        if has_text:
            yield "[Assistant]: " + "\n".join(texts)
        if calls:
            yield "[Assistant tool calls]: " + "; ".join(calls)
    elif role == "toolResult":
        text = "".join(_texts(content))
        if text:
            yield f"[Tool result]: {truncate_for_summary(text)}"


def serialize_conversation(messages: Iterable[Mapping[str, Any]]) -> str:
    """The summarizer's view of provider messages (pi's format, byte for byte)."""
    parts: list[str] = []
    for message in messages:
        parts.extend(_serialize_one(message))
    return "\n\n".join(parts)
