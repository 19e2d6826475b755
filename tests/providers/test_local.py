"""The embedded local model: prompt rendering, the tool-call convention, and end-to-end runs.

The end-to-end tests (``local_model``) run SmolLM2-135M through llama-cpp-python and are skipped,
with the reason, only when the ``local`` extra is not installed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from pi_context.messages import (
    Message,
    SystemMessage,
    ToolDeclaration,
    assistant_message,
    text_block,
    text_of,
    tool_call,
    tool_result_message,
    user_message,
)
from pi_context.providers.base import ModelRequest, RequestOptions, StreamDone, TextDelta, complete
from pi_context.providers.catalog import LOCAL_MODEL
from pi_context.providers.delivery import plan_delivery
from pi_context.providers.local import (
    LocalModel,
    after_tool_result,
    local_available,
    mentioned_files,
    parse_tool_calls,
    render_chatml,
    tool_grammar,
    wants_tool,
)

READ: ToolDeclaration = {
    "name": "read",
    "description": "Read a file from disk.\nMore details here.",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["path"],
    },
}

SYSTEM: SystemMessage = {
    "role": "system",
    "content": "",
    "sections": {"preamble": "You are a helpful assistant.", "cwd": "<cwd>\n/tmp/p\n</cwd>"},
    "toolsAdded": [READ],
    "timestamp": 1,
}


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


# --- end to end ------------------------------------------------------------------------------

AVAILABLE, REASON = local_available()
needs_model = pytest.mark.skipif(not AVAILABLE, reason=f"local extra not installed: {REASON}")


async def _run(model: LocalModel, request: ModelRequest) -> tuple[StreamDone, list[Any]]:
    events = [e async for e in model.stream(request)]
    done = events[-1]
    assert isinstance(done, StreamDone)
    return done, events


@pytest.mark.local_model
@pytest.mark.slow
@needs_model
async def test_local_model_answers() -> None:
    model = LocalModel()
    request = ModelRequest(
        messages=[user_message("What is the capital of France? Answer in one word.", timestamp=1)],
        system_prompt="You are a helpful assistant.",
        options=RequestOptions(max_tokens=24),
    )
    done, events = await _run(model, request)
    assert done.error is None, done.error
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text.strip()
    assert done.message["content"] == [{"type": "text", "text": text}]
    assert done.message["stopReason"] in ("stop", "length")
    usage = done.message["usage"]
    assert usage["input"] + usage["cacheRead"] > 10
    assert 0 < usage["output"] <= 24
    assert done.message["provider"] == "local"


@pytest.mark.local_model
@pytest.mark.slow
@needs_model
async def test_local_model_summarizes_and_reuses_the_prefix() -> None:
    model = LocalModel()
    conversation = (
        "[User]: Please rename the function load_data to read_rows in utils.py.\n\n"
        "[Assistant]: I renamed load_data to read_rows in utils.py and updated two callers."
    )
    request = ModelRequest(
        messages=[
            user_message(
                f"Summarize this conversation in one sentence:\n\n{conversation}", timestamp=1
            )
        ],
        system_prompt="You write short summaries.",
        options=RequestOptions(max_tokens=48, cache="none"),
    )
    done = await complete(model, request)
    assert done.error is None
    first_text = "".join(b["text"] for b in done.message["content"] if b["type"] == "text")
    assert first_text.strip()
    # the same conversation, one turn longer: llama.cpp reuses the evaluated prefix
    longer = ModelRequest(
        messages=[*request.messages, done.message, user_message("Shorter, please.", timestamp=2)],
        system_prompt=request.system_prompt,
        options=RequestOptions(max_tokens=16),
    )
    again = await complete(model, longer)
    assert again.error is None
    assert again.message["usage"]["cacheRead"] > 20


@pytest.mark.local_model
@pytest.mark.slow
@needs_model
async def test_local_model_emits_a_tool_call() -> None:
    model = LocalModel()
    request = ModelRequest(
        messages=[SYSTEM, user_message("Read the file notes.txt", timestamp=2)],
        options=RequestOptions(max_tokens=64, tool_choice="required"),
    )
    done, _ = await _run(model, request)
    assert done.error is None, done.error
    calls = [b for b in done.message["content"] if b["type"] == "toolCall"]
    assert len(calls) == 1
    call = calls[0]
    assert call["name"] == "read"
    assert call["arguments"] == {"path": "notes.txt"}  # pinned to the file the user named
    assert "argumentsError" not in call
    assert done.message["stopReason"] == "toolUse"


@pytest.mark.local_model
@pytest.mark.slow
@needs_model
async def test_local_model_output_is_text_or_a_valid_call_in_auto_mode() -> None:
    model = LocalModel()
    request = ModelRequest(
        messages=[SYSTEM, user_message("Use the read tool to read notes.txt", timestamp=2)],
        options=RequestOptions(max_tokens=64),
    )
    done, _ = await _run(model, request)
    assert done.error is None
    for block in done.message["content"]:
        if block["type"] == "toolCall":
            assert block["name"] == "read"
            assert "argumentsError" not in block
        else:
            assert block["type"] == "text"
            assert not block["text"].lstrip().startswith("<tool_call>")


@pytest.mark.local_model
@pytest.mark.slow
@needs_model
async def test_local_model_drives_the_agent_loop(tmp_path: Path) -> None:
    """A real run: the model calls ``read`` on the file the user names, then answers."""
    from pi_context.agent.session import AgentSession

    project = tmp_path / "proj"
    project.mkdir()
    (tmp_path / "agent").mkdir()
    (project / "notes.txt").write_text("The secret word is banana.\n", encoding="utf-8")
    model = LocalModel(dataclasses.replace(LOCAL_MODEL, max_tokens=48))
    session = await AgentSession.create(
        cwd=project,
        model=model,
        agent_dir=tmp_path / "agent",
        trusted=True,
        settings={"compaction": {"reserveTokens": 1024, "keepRecentTokens": 2000}},
    )
    try:
        await session.run("Use the read tool to read notes.txt")
        messages = session.context_messages()
    finally:
        await session.aclose()
    roles = [m["role"] for m in messages]
    assert roles[-4:] == ["user", "assistant", "toolResult", "assistant"]
    call = messages[-3]["content"][0]
    assert (call["type"], call["name"], call["arguments"]) == (
        "toolCall",
        "read",
        {"path": "notes.txt"},
    )
    assert "banana" in text_of(messages[-2]["content"])
    final = messages[-1]
    assert final["stopReason"] in ("stop", "length")
    assert all(b["type"] == "text" for b in final["content"])
    assert final["usage"]["cacheRead"] > 0  # the prompt prefix was reused


@pytest.mark.local_model
@pytest.mark.slow
@needs_model
async def test_local_model_reports_overflow() -> None:
    model = LocalModel()
    huge = "word " * 9000
    done = await complete(model, ModelRequest(messages=[user_message(huge, timestamp=1)]))
    assert done.error is not None
    assert done.error.kind == "context_overflow"
    assert done.message["stopReason"] == "error"
