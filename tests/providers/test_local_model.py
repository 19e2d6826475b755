"""The embedded local model end to end: SmolLM2-135M through llama-cpp-python.

Every test here runs the real model (marked ``local_model`` and ``slow``); the module is
skipped, with the reason, only when the ``local`` extra is not installed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from pi_context.messages import text_of, user_message
from pi_context.model import ModelRequest, RequestOptions, StreamDone, TextDelta, complete
from pi_context.providers.catalog import LOCAL_MODEL
from pi_context.providers.local import LocalModel
from pi_context.providers.local_discovery import local_available
from pi_context.providers.local_prompt import markup_start
from tests.jsonview import as_json
from tests.providers.local_data import BASH, READ, SYSTEM, WRITE

AVAILABLE, REASON = local_available()
pytestmark = [
    pytest.mark.local_model,
    pytest.mark.slow,
    pytest.mark.skipif(not AVAILABLE, reason=f"local extra not installed: {REASON}"),
]


async def _run(model: LocalModel, request: ModelRequest) -> tuple[StreamDone, list[Any]]:
    events = [e async for e in model.stream(request)]
    done = events[-1]
    assert isinstance(done, StreamDone)
    return done, events


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


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("Write a haiku about the sea.", None),
        ("Read the file notes.txt", ("read", {"path": "notes.txt"})),
    ],
)
async def test_local_model_decides_between_text_and_a_call(
    prompt: str, expected: tuple[str, dict[str, str]] | None
) -> None:
    """The model chooses; the issue's haiku used to run ``bash``, now it is a poem."""
    model = LocalModel()
    request = ModelRequest(
        messages=[SYSTEM, user_message(prompt, timestamp=2)],
        tools=[READ, BASH, WRITE],
        options=RequestOptions(max_tokens=48),
    )
    done, _ = await _run(model, request)
    assert done.error is None, done.error
    calls = [b for b in done.message["content"] if b["type"] == "toolCall"]
    if expected is None:
        assert calls == []
        text = "".join(b["text"] for b in done.message["content"] if b["type"] == "text")
        assert text.strip()
        assert markup_start(text) == -1
    else:
        assert [(c["name"], c["arguments"]) for c in calls] == [expected]
        assert done.message["stopReason"] == "toolUse"


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
        await session.run("Read the file notes.txt")
        messages = as_json(session.session.projection().messages)
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
    assert markup_start(text_of(final["content"])) == -1
    assert final["usage"]["cacheRead"] > 0  # the prompt prefix was reused


async def test_local_model_reports_overflow() -> None:
    model = LocalModel()
    huge = "word " * 9000
    done = await complete(model, ModelRequest(messages=[user_message(huge, timestamp=1)]))
    assert done.error is not None
    assert done.error.kind == "context_overflow"
    assert done.message["stopReason"] == "error"


def test_instances_share_one_loaded_model_and_its_lock() -> None:
    """Two adapters over the same file never run llama.cpp concurrently on one context."""
    first, second = LocalModel()._llama(), LocalModel()._llama()
    assert first[0] is second[0]
    assert first[1] is second[1]
