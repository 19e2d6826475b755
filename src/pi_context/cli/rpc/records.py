"""The records of pi's RPC protocol: commands in, responses out.

A response is ``{"id"?, "type": "response", "command", "success": true, "data"?}`` or
``{"id"?, "type": "response", "command", "success": false, "error"}`` with exactly that key
order; ``id`` is omitted when the command had none and ``data`` when the command returns
nothing (:data:`NO_DATA`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from pi_context import _json

__all__ = [
    "NO_DATA",
    "Command",
    "RpcCommandError",
    "failure",
    "parse_command",
    "parse_error_message",
    "success",
]


class _NoData:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_DATA"


NO_DATA: Final = _NoData()
"""A handler's result when the response carries no ``data`` key."""


class RpcCommandError(Exception):
    """A command failed; the message is the response's ``error`` text, verbatim."""


@dataclass(frozen=True, slots=True)
class Command:
    """One parsed input line: its ``type`` (``None`` when absent), ``id`` and fields."""

    type: str | None
    id: str | None
    fields: Mapping[str, Any]


def _head(command: str | None, command_id: str | None) -> dict[str, Any]:
    record: dict[str, Any] = {}
    if command_id is not None:
        record["id"] = command_id
    record["type"] = "response"
    if command is not None:
        record["command"] = command
    return record


def success(command: str, command_id: str | None, data: Any = NO_DATA) -> dict[str, Any]:
    record = _head(command, command_id)
    record["success"] = True
    if data is not NO_DATA:
        record["data"] = data
    return record


def failure(command: str | None, command_id: str | None, error: str) -> dict[str, Any]:
    record = _head(command, command_id)
    record["success"] = False
    record["error"] = error
    return record


_CONTEXT = 10  # V8's kMaxContextCharacters
_LITERALS = {"n": "null", "t": "true", "f": "false"}


def _unexpected_token(text: str, pos: int) -> str:
    """V8's ``Unexpected token`` message: the whole text when short, else ~10 characters of
    context either side of the offending character."""
    char = text[pos]
    if len(text) < 2 * _CONTEXT + 1:
        return f"Unexpected token '{char}', \"{text}\" is not valid JSON"
    start, end = max(0, pos - _CONTEXT), min(len(text), pos + _CONTEXT)
    snippet = f'"{text[start:end]}"'
    before = "..." if start > 0 else ""
    after = "..." if end < len(text) else ""
    return f"Unexpected token '{char}', {before}{snippet}{after} is not valid JSON"


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


def _innermost_open(text: str, pos: int) -> str | None:
    """The innermost ``{`` or ``[`` open at ``pos`` (strings skipped)."""
    stack: list[str] = []
    in_string = escaped = False
    for char in text[:pos]:
        if in_string:
            escaped = not escaped and char == "\\"
            if char == '"' and not escaped:
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "{[":
            stack.append(char)
        elif char in "}]" and stack:
            stack.pop()
    return stack[-1] if stack else None


def parse_error_message(text: str) -> str:
    """The message ``JSON.parse(text)`` throws in Node (V8) for the common mistakes."""
    try:
        json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        msg, pos = exc.msg, exc.pos
    except ValueError:  # NaN / Infinity: V8 stops at their first character
        stripped = text.lstrip(" \t\n\r")
        return _unexpected_token(text, len(text) - len(stripped))
    else:
        return "Unexpected end of JSON input"
    if pos >= len(text):
        if msg.startswith("Expecting ',' delimiter"):
            return _delimiter_message(text, pos)
        if msg.startswith("Expecting property name"):
            return f"Expected property name or '}}' in JSON at position {pos}"
        return "Unexpected end of JSON input"
    if msg.startswith("Extra data"):
        return f"Unexpected non-whitespace character after JSON at position {pos}"
    if msg.startswith("Unterminated string"):
        return f"Unterminated string in JSON at position {len(text)}"
    if msg.startswith("Expecting ',' delimiter"):
        return _delimiter_message(text, pos)
    if msg.startswith("Expecting property name"):
        return f"Expected property name or '}}' in JSON at position {pos}"
    literal = _LITERALS.get(text[pos])
    if literal is not None:  # V8 reads the literal and stops at the first wrong character
        for offset, expected in enumerate(literal):
            at = pos + offset
            if at >= len(text):
                return "Unexpected end of JSON input"
            if text[at] != expected:
                return _unexpected_token(text, at)
    return _unexpected_token(text, pos)


def _delimiter_message(text: str, pos: int) -> str:
    if _innermost_open(text, pos) == "[":
        return f"Expected ',' or ']' after array element in JSON at position {pos}"
    return f"Expected ',' or '}}' after property value in JSON at position {pos}"


def parse_command(line: str) -> Command:
    """The command of one input line; raises :class:`RpcCommandError` with pi's parse message."""
    try:
        value = _json.loads(line)
    except ValueError as exc:
        raise RpcCommandError(f"Failed to parse command: {parse_error_message(line)}") from exc
    if not isinstance(value, dict):
        return Command(None, None, {})
    kind = value.get("type")
    command_id = value.get("id")
    return Command(
        kind if isinstance(kind, str) else None,
        command_id if isinstance(command_id, str) else None,
        value,
    )
