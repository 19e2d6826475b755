"""Small builders shared by the session tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from hypothesis import strategies as st

from pi_context.messages import (
    AgentMessage,
    AssistantMessage,
    UserMessage,
    assistant_message,
    text_block,
    tool_call,
    tool_result_message,
    user_message,
)
from pi_context.session import Entry, ModelRef, Session
from pi_context.session.projection import project_entry

__all__ = [
    "SESSION_OPS",
    "apply_op",
    "assistant",
    "message_line",
    "reference_projection",
    "tool_result",
    "user",
]


def user(text: str) -> UserMessage:
    return user_message(text, timestamp=1_700_000_000_000)


def assistant(
    text: str = "ok",
    *,
    calls: list[tuple[str, dict[str, Any]]] | None = None,
    provider: str = "anthropic",
    model: str = "claude-x",
) -> AssistantMessage:
    """A typed assistant message: ``text``, then tool calls numbered ``call_1``, ``call_2``...
    (given as ``(name, arguments)``)."""
    content: list[Any] = [text_block(text)]
    for n, (name, args) in enumerate(calls or [], start=1):
        content.append(tool_call(f"call_{n}", name, args))
    return assistant_message(
        content,
        api="anthropic-messages",
        provider=provider,
        model=model,
        stop_reason="toolUse" if calls else "stop",
        timestamp=1_700_000_000_001,
    )


def tool_result(text: str, call_id: str = "call_1", name: str = "read") -> Any:
    return tool_result_message(call_id, name, [text_block(text)], timestamp=1_700_000_000_002)


def message_line(entry_id: str, parent: str | None, text: str = "x") -> dict[str, Any]:
    """A user message entry as pi writes it in a file (its keys in pi's order)."""
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-05T10:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1},
    }


def reference_projection(
    path: Sequence[Entry],
) -> tuple[list[str], list[AgentMessage], str, ModelRef | None]:
    """pi's projection of a root→leaf path, stated plainly over decoded entries, apart from
    the package's own rules (which read positions): the context entries' ids, their messages,
    the thinking level and the model. The tests hold the package to it.

    Context entries: without a compaction on the path, the path. Otherwise the newest
    compaction, then the path entries from the first one whose id is its ``firstKeptEntryId``
    up to it, leaving out ``system`` messages, then everything after it. The latest
    ``context_edit`` per target among those entries wins; only the first (newest) compaction
    speaks. Thinking level and model: the last ones set on the whole path."""
    data = [entry.data for entry in path]  # an unreadable line decodes to type "unreadable"

    def role(item: Mapping[str, Any]) -> Any:
        message = item.get("message")
        return message.get("role") if isinstance(message, dict) else None

    compactions = [i for i, item in enumerate(data) if item.get("type") == "compaction"]
    if not compactions:
        context = list(range(len(path)))
    else:
        last = compactions[-1]
        first_kept = data[last].get("firstKeptEntryId")
        starts = [i for i in range(last) if path[i].id == first_kept]
        kept = [
            i
            for i in range(starts[0] if starts else last, last)
            if not (data[i].get("type") == "message" and role(data[i]) == "system")
        ]
        context = [last, *kept, *range(last + 1, len(path))]
    edits: dict[str, Entry] = {}
    for i in context:
        target = data[i].get("targetId")
        if data[i].get("type") == "context_edit" and isinstance(target, str):
            edits[target] = path[i]
    messages: list[AgentMessage] = []
    for spot, i in enumerate(context):
        if spot == 0 or data[i].get("type") != "compaction":
            messages += project_entry(path[i], edits.get(path[i].id))
    level, model = "off", None
    for item in data:
        kind = item.get("type")
        if kind == "thinking_level_change":
            value = item.get("thinkingLevel")
            level = value if isinstance(value, str) and value else level
        elif kind == "model_change":
            model = cast(
                ModelRef, {"provider": item.get("provider"), "modelId": item.get("modelId")}
            )
        elif kind == "message" and role(item) == "assistant":
            message = item["message"]
            model = cast(
                ModelRef, {"provider": message.get("provider"), "modelId": message.get("model")}
            )
    return [path[i].id for i in context], messages, level, model


SESSION_OPS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "user",
                "assistant",
                "tool",
                "edit",
                "omit",
                "compact",
                "move",
                "label",
                "model",
                "level",
                "custom_message",
                "system",
            ]
        ),
        st.integers(min_value=0, max_value=10_000),
    ),
    max_size=40,
)
"""Steps that grow or move a session (``(op, n)``; see :func:`apply_op`): messages of each role,
context edits, compactions, leaf moves, labels, model and thinking-level changes."""


def apply_op(s: Session, op: str, n: int) -> None:
    """Apply one drawn ``(op, n)`` of :data:`SESSION_OPS` to ``s`` (``n`` picks targets and texts)."""
    entries = s.entries
    visible = [
        e
        for e in s.branch_entries()
        if e.type == "message" and e.role in ("user", "assistant", "toolResult")
    ]
    if op == "user":
        s.append_message(user(f"u{n}"))
    elif op == "assistant":
        s.append_message(assistant(f"a{n}", calls=[("read", {"n": n})] if n % 2 else None))
    elif op == "tool":
        s.append_message(tool_result(f"r{n}"))
    elif op in ("edit", "omit") and visible:
        target = visible[n % len(visible)]
        s.append_context_edit(target.id, None if op == "omit" else {"content": f"e{n}"})
    elif op == "compact":
        path = s.branch_entries()
        keep = path[n % len(path)].id if path and n % 3 else None
        s.append_compaction(
            f"s{n}",
            keep,
            n,
            system_message={"role": "system", "content": f"snap{n}", "timestamp": n},
        )
    elif op == "move" and entries:
        s.move_leaf(entries[n % len(entries)].id)
    elif op == "label" and entries:
        s.append_label(entries[n % len(entries)].id, f"l{n}")
    elif op == "model":
        s.append_model_change("p", f"m{n}")
    elif op == "level":
        s.append_thinking_level_change(["low", "high"][n % 2])
    elif op == "custom_message":
        s.append_custom_message("t", f"c{n}")
    elif op == "system":
        s.append_message(
            {"role": "system", "content": "", "sections": {"x": str(n)}, "timestamp": n}
        )
