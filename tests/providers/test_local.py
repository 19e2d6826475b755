"""The embedded local model without running it: prompt rendering and the tool-call convention.

Runs of the real model are in ``test_local_model.py``.
"""

from __future__ import annotations

from typing import Any

from pi_context.messages import (
    Message,
    assistant_message,
    text_block,
    tool_call,
    tool_result_message,
    user_message,
)
from pi_context.providers.delivery import plan_delivery
from pi_context.providers.local import (
    after_tool_result,
    mentioned_files,
    parse_tool_calls,
    render_chatml,
    tool_grammar,
    wants_tool,
)
from tests.providers.local_data import READ, SYSTEM


def test_render_chatml_layout() -> None:
    messages: list[Message] = [
        SYSTEM,
        user_message("open a.txt", timestamp=2),
        assistant_message(
            [tool_call("c1", "read", {"path": "a.txt"})],
            api="l",
            provider="l",
            model="l",
            stop_reason="toolUse",
            timestamp=3,
        ),
        tool_result_message("c1", "read", [text_block("hello")], timestamp=4),
        {"role": "system", "content": "", "sections": {"cwd": "<cwd>\n/q\n</cwd>"}, "timestamp": 5},
    ]
    prompt = render_chatml(plan_delivery(messages, mode="in_place"))
    assert prompt.startswith(
        "<|im_start|>system\nYou are a helpful assistant.\n\n<cwd>\n/tmp/p\n</cwd>\n\n# Tools\n"
    )
    assert '- read: Read a file from disk. (arguments: "path", "limit")' in prompt
    assert (
        '<|im_start|>assistant\n<tool_call>{"name":"read","arguments":{"path":"a.txt"}}</tool_call><|im_end|>'
        in prompt
    )
    assert '<|im_start|>user\n<tool_result name="read">\nhello\n</tool_result><|im_end|>' in prompt
    assert (
        '<|im_start|>system\nUpdated system prompt section "cwd":\n\n<cwd>\n/q\n</cwd><|im_end|>'
        in prompt
    )
    assert prompt.endswith("<|im_start|>assistant\n")


def test_prompts_of_a_growing_conversation_extend_each_other() -> None:
    first: list[Message] = [SYSTEM, user_message("hi", timestamp=2)]
    second = [
        *first,
        assistant_message([text_block("Hello!")], api="l", provider="l", model="l", timestamp=3),
        user_message("bye", timestamp=4),
    ]
    a = render_chatml(plan_delivery(first, mode="in_place"))
    b = render_chatml(plan_delivery(second, mode="in_place"))
    # everything but the open assistant turn is reused
    assert b.startswith(a[: -len("<|im_start|>assistant\n")])


def test_parse_tool_calls() -> None:
    text, calls = parse_tool_calls(
        '<tool_call>{"name": "read", "arguments": {"path": "x"}}</tool_call>', [READ]
    )
    assert text == ""
    assert calls == [("read", '{"path":"x"}', "")]
    text, calls = parse_tool_calls('Sure. <tool_call>{"name": "read"', [READ])
    assert text == "Sure."
    assert calls[0][0] == "invalid"
    assert "not valid JSON" in calls[0][2]
    assert parse_tool_calls("plain answer", [READ]) == ("plain answer", [])


def test_grammar_names_every_tool_and_required_mode() -> None:
    grammar = tool_grammar([READ, {"name": "bash", "description": "d", "parameters": {}}])
    assert grammar.startswith("root ::= call | text call?")
    assert '"\\"read\\""' in grammar
    assert '"\\"bash\\""' in grammar
    assert '"\\"path\\"" ws ":" ws string' in grammar
    assert tool_grammar([READ], required=True).startswith("root ::= call\n")


def test_tool_intent_rules() -> None:
    def plan(*messages: Message) -> Any:
        return plan_delivery([SYSTEM, *messages], mode="in_place")

    assert wants_tool(plan(user_message("Use the read tool please", timestamp=2)), [READ])
    assert wants_tool(plan(user_message("What is in notes.txt?", timestamp=2)), [READ])
    assert not wants_tool(plan(user_message("What is 2+2?", timestamp=2)), [READ])
    call = assistant_message(
        [tool_call("c1", "read", {"path": "a.txt"})],
        api="l",
        provider="l",
        model="l",
        stop_reason="toolUse",
        timestamp=3,
    )
    result = tool_result_message("c1", "read", [text_block("x")], timestamp=4)
    answered = plan(user_message("read a.txt", timestamp=2), call, result)
    assert not wants_tool(answered, [READ])
    assert after_tool_result(answered)
    assert not after_tool_result(plan(user_message("read a.txt", timestamp=2)))
    assert mentioned_files("see notes.txt and src/app.py, not v1.2 or me@x.com; notes.txt") == [
        "notes.txt",
        "src/app.py",
    ]


def test_grammar_pins_paths_to_mentioned_files() -> None:
    grammar = tool_grammar([READ], required=True, paths=["notes.txt", "a b.md"])
    assert '"\\"path\\"" ws ":" ws ( "\\"notes.txt\\"" | "\\"a b.md\\"" )' in grammar
