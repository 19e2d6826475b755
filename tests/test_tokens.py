from __future__ import annotations

from typing import Any

from pi_context.tokens import IMAGE_CHARS, estimate_chars, estimate_tokens


def test_user_text_counts_utf16_units_rounded_up() -> None:
    assert estimate_tokens({"role": "user", "content": "😀", "timestamp": 1}) == 1  # 2 units
    assert estimate_chars({"role": "user", "content": "😀😀😀", "timestamp": 1}) == 6
    assert estimate_tokens({"role": "user", "content": "abcde", "timestamp": 1}) == 2


def test_images_and_blocks() -> None:
    msg = {
        "role": "toolResult",
        "content": [
            {"type": "text", "text": "abcd"},
            {"type": "image", "data": "x", "mimeType": "image/png"},
        ],
    }
    assert estimate_chars(msg) == 4 + IMAGE_CHARS


def test_assistant_tool_call_uses_js_stringify() -> None:
    msg = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm"},
            {
                "type": "toolCall",
                "id": "c",
                "name": "read",
                "arguments": {"b": 1.0, "10": "é", "2": None},
            },
        ],
    }
    # JSON.stringify: {"2":null,"10":"é","b":1} -> 25 units
    assert estimate_chars(msg) == 3 + 4 + len('{"2":null,"10":"é","b":1}')


def test_system_counts_sections_and_tools_added() -> None:
    msg = {
        "role": "system",
        "content": "ab",
        "sections": {"a": "xyz", "b": None},
        "toolsAdded": [{"name": "t"}],
        "toolsRemoved": [{"name": "zzzzzzzz"}],
    }
    assert estimate_chars(msg) == 2 + 3 + len('[{"name":"t"}]')


def test_other_roles() -> None:
    assert (
        estimate_chars(
            {"role": "bashExecution", "command": "ls", "output": "abc", "excludeFromContext": True}
        )
        == 5
    )
    assert estimate_chars({"role": "compactionSummary", "summary": "12345"}) == 5
    assert estimate_tokens({"role": "mystery", "content": "x" * 100}) == 0


def test_an_infinite_usage_is_no_usage() -> None:
    from pi_context.tokens import estimate_context_tokens, has_valid_usage

    prompt: dict[str, Any] = {"role": "user", "content": "x" * 40, "timestamp": 1}
    endless: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "text", "text": "ok"}],
        "usage": {"input": float("inf"), "output": 5, "cacheRead": 0, "cacheWrite": 0},
        "stopReason": "stop",
        "timestamp": 2,
    }
    assert not has_valid_usage(endless)
    # the estimate falls back to characters instead of failing on int(inf)
    estimate = estimate_context_tokens([prompt, endless])
    assert (estimate.tokens, estimate.last_usage_index) == (10 + 1, None)
    finite = {**endless, "usage": {**endless["usage"], "input": 100}}
    assert has_valid_usage(finite)
    assert estimate_context_tokens([prompt, finite]).tokens == 105
