"""Entries for wrong-type properties: a well-typed template of each entry type pi writes, every
key path inside one, a copy with the value at a path replaced, and the wrong values to put there.
The hostile suite and the session field-check properties draw from them."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.hostile.helpers import entry, raw_assistant

SYSTEM: dict[str, Any] = {"role": "system", "content": "", "timestamp": 1}
"""A system message (fields to add to it)."""
TOOL_RESULT: dict[str, Any] = {
    "role": "toolResult",
    "toolCallId": "c1",
    "toolName": "read",
    "content": [{"type": "text", "text": "r"}],
    "isError": False,
    "timestamp": 3,
}
"""A tool result for call ``c1``."""

WRONG_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=4),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)
"""Values of every JSON type, to put where a field of another type belongs."""


def entry_templates() -> list[dict[str, Any]]:
    """A well-typed entry of each kind whose fields pi interprets (id ``x1``, parent ``u1``)."""
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"p": "a"}}
    return [
        entry(
            "x1", "u1", message=raw_assistant(content=[{"type": "thinking", "thinking": "t"}, call])
        ),
        entry("x1", "u1", message=TOOL_RESULT),
        entry(
            "x1",
            "u1",
            message={
                **SYSTEM,
                "sections": {"a": "b"},
                "toolsAdded": [{"name": "r", "description": "d", "parameters": {}}],
                "toolsRemoved": [{"name": "w"}],
            },
        ),
        entry(
            "x1",
            "u1",
            message={
                "role": "bashExecution",
                "command": "ls",
                "output": "o",
                "exitCode": 1,
                "cancelled": False,
                "truncated": True,
                "fullOutputPath": "/p",
                "timestamp": 1,
            },
        ),
        entry(
            "x1",
            "u1",
            "compaction",
            summary="s",
            firstKeptEntryId="u1",
            tokensBefore=5,
            usage=dict(raw_assistant()["usage"]),
            systemMessage={**SYSTEM, "sections": {"a": "b"}},
        ),
        entry("x1", "u1", "branch_summary", fromId="u1", summary="s"),
        entry(
            "x1",
            "u1",
            "custom_message",
            customType="k",
            content=[{"type": "text", "text": "c"}],
            display=True,
        ),
        entry("x1", "u1", "context_edit", targetId="u1", replacement={"content": "new"}),
        entry("x1", "u1", "model_change", provider="p", modelId="m"),
        entry("x1", "u1", "thinking_level_change", thinkingLevel="high"),
        entry("x1", "u1", "label", targetId="u1", label="L"),
        entry("x1", "u1", "session_info", name="n"),
        entry(
            "x1",
            "u1",
            "usage",
            kind="k",
            provider="p",
            model="m",
            usage=dict(raw_assistant()["usage"]),
        ),
    ]


def key_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path inside ``value`` (objects and lists), the value's own first."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += key_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += key_paths(item, (*prefix, index))
    return found


def replaced_at(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """A copy of ``value`` with the item at key path ``path`` replaced by ``new``."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: replaced_at(value[head], rest, new)}
    copy = list(value)
    copy[head] = replaced_at(copy[head], rest, new)
    return copy
