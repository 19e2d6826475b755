"""PiContext over a session store: each run's conversation_id is its stored session's id."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pi_context.integrations.pydantic_ai import PiContext
from pi_context.messages import text_of
from pi_context.store import MemoryStore, SessionRef, SessionStore, open_store


@pytest.fixture
async def store() -> AsyncIterator[SessionStore]:
    opened = await open_store("memory:")
    yield opened
    await opened.aclose()


def _agent(pi: PiContext, *replies: str) -> Agent[None, str]:
    answers = iter(replies)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(next(answers))])

    return Agent(FunctionModel(respond), capabilities=[pi])


def _texts(entries: list[dict[str, Any]]) -> list[str]:
    return [
        text_of(entry["message"]["content"])
        for entry in entries
        if entry["type"] == "message" and entry["message"]["role"] in ("user", "assistant")
    ]


def _chain(entries: list[dict[str, Any]]) -> bool:
    return [e["parentId"] for e in entries][1:] == [e["id"] for e in entries][:-1]


async def test_each_conversation_is_a_stored_session_created_by_its_first_run(
    store: SessionStore,
) -> None:
    pi = PiContext(store=store, tenant="acme", context_window=8_000)
    agent = _agent(pi, "four", "nine")
    await agent.run("two plus two?", conversation_id="c-1")
    await agent.run("three squared?", conversation_id="c-2")
    one = await store.load(SessionRef("acme", "c-1"))
    two = await store.load(SessionRef("acme", "c-2"))
    assert _texts(one.entries) == ["two plus two?", "four"]
    assert _texts(two.entries) == ["three squared?", "nine"]
    with pytest.raises(RuntimeError, match="works per conversation"):
        _ = pi.engine


async def test_two_instances_on_one_conversation_see_each_others_turns(
    store: SessionStore,
) -> None:
    a_pi = PiContext(store=store, context_window=8_000)
    b_pi = PiContext(store=store, context_window=8_000)
    a = _agent(a_pi, "first answer", "third answer")
    b = _agent(b_pi, "second answer")
    first = await a.run("first question", conversation_id="c-3")
    second = await b.run("second question", message_history=first.all_messages())
    # a's session is behind b's turn: its commit finds the leaf moved, it opens the
    # conversation again and records the history as stored, once
    await a.run("third question", message_history=second.all_messages())
    stored = await store.load(SessionRef("", "c-3"))
    assert _texts(stored.entries) == [
        "first question",
        "first answer",
        "second question",
        "second answer",
        "third question",
        "third answer",
    ]
    assert _chain(stored.entries)


async def test_a_compaction_on_a_stored_conversation_is_stored(store: SessionStore) -> None:
    pi = PiContext(store=store, context_window=2_000, keep_recent_tokens=200)
    agent = _agent(pi, *[f"answer {i}: " + "lorem ipsum " * 200 for i in range(8)])
    history: list[ModelMessage] = []
    for i in range(8):
        result = await agent.run(
            f"question {i} about the harbor", message_history=history, conversation_id="c-4"
        )
        history = result.all_messages()
    stored = await store.load(SessionRef("", "c-4"))
    assert any(e["type"] == "compaction" for e in stored.entries)
    assert pi.last_outcome is not None


def test_mistakes_fail_at_the_call(tmp_path: Path) -> None:
    store = MemoryStore()
    with pytest.raises(ValueError, match="either store= or session_file="):
        PiContext(store=store, session_file=tmp_path / "s.jsonl", context_window=8_000)
    with pytest.raises(ValueError, match="pass store= too"):
        PiContext(session_file=tmp_path / "s.jsonl", tenant="acme", context_window=8_000)
    with pytest.raises(ValueError, match="reserve_tokens"):
        PiContext(store=store, context_window=8_000, reserve_tokens=-1)


async def test_recall_finds_what_compaction_replaced_in_the_runs_conversation(
    store: SessionStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    pi = PiContext(store=store, context_window=2_000, keep_recent_tokens=200)
    returned: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1].parts[-1]
        if isinstance(last, UserPromptPart) and last.content == "what was the harbor code?":
            return ModelResponse(parts=[ToolCallPart("recall", {"query": "harbor code"})])
        if isinstance(last, ToolReturnPart):
            returned.append(str(last.content))
        return ModelResponse(parts=[TextPart("noted " + "lorem ipsum " * 200)])

    agent = Agent(FunctionModel(respond), capabilities=[pi], tools=[pi.recall_tool()])
    history: list[ModelMessage] = []
    prompts = ["the harbor code is TEAL-4417", *[f"question {i}" for i in range(6)]]
    for prompt in [*prompts, "what was the harbor code?"]:
        result = await agent.run(prompt, message_history=history, conversation_id="c-r")
        history = result.all_messages()
    stored = await store.load(SessionRef("", "c-r"))
    assert any(e["type"] == "compaction" for e in stored.entries)
    assert len(returned) == 1
    assert "TEAL-4417" in returned[0]
