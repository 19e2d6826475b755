from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context import _json
from pi_context.compaction.file_ops import FileOperations, format_file_operations, js_sorted
from pi_context.compaction.serialize import (
    format_tool_call,
    serialize_conversation,
    truncate_for_summary,
)


def test_roles_and_separators() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "secret"},
                {"type": "text", "text": "one"},
                {"type": "text", "text": "two"},
                {
                    "type": "toolCall",
                    "id": "1",
                    "name": "read",
                    "arguments": {"path": "x", "n": 1.0},
                },
                {"type": "toolCall", "id": "2", "name": "ls", "arguments": {}},
            ],
        },
        {"role": "toolResult", "content": [{"type": "text", "text": "out"}]},
        {"role": "system", "content": "ignored"},
        {"role": "toolResult", "content": []},
    ]
    assert serialize_conversation(messages) == (
        "[User]: ab\n\n[Assistant]: one\ntwo\n\n"
        '[Assistant tool calls]: read(path="x", n=1); ls()\n\n[Tool result]: out'
    )


def test_js_key_order_in_tool_calls() -> None:
    assert format_tool_call("w", {"z": 1, "a": 2, "10": 3, "2": 4}) == "w(2=4, 10=3, z=1, a=2)"
    assert format_tool_call("r", None) == "r()"


def test_truncation_note_and_surrogates() -> None:
    text = "x" * 1999 + "😀" + "y" * 10
    out = truncate_for_summary(text)
    assert out.startswith("x" * 1999 + "\n\n[... ")
    assert out.endswith(f"[... {_json.utf16_len(text) - 2000} more characters truncated]")


@settings(deadline=None)
@given(st.text(max_size=2600))
def test_truncation_keeps_at_most_2000_units_and_never_splits_a_pair(text: str) -> None:
    out = truncate_for_summary(text)
    if _json.utf16_len(text) <= 2000:
        assert out == text
        return
    head, _, note = out.rpartition("\n\n[... ")
    assert text.startswith(head)
    assert 1999 <= _json.utf16_len(head) <= 2000
    assert note.endswith(" more characters truncated]")


def test_file_lists() -> None:
    ops = FileOperations()
    ops.seed({"readFiles": ["old.py", 3], "modifiedFiles": ["m.py"]})
    ops.add_message(
        {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "name": "read", "arguments": {"path": "m.py"}},
                {"type": "toolCall", "name": "write", "arguments": {"path": "new.py"}},
                {"type": "toolCall", "name": "read", "arguments": {"path": ""}},
            ],
        }
    )
    read, modified = ops.lists()
    assert read == ["old.py"]
    assert modified == ["m.py", "new.py"]
    assert format_file_operations([], []) == ""
    assert js_sorted(["b", "B", "\U0001f600", "\uffff"]) == ["B", "b", "\U0001f600", "\uffff"]
