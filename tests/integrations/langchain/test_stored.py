"""PiSummarizationMiddleware over a session store: each thread id is a stored session's id."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from pi_context.integrations.langchain import FakeToolChatModel, PiSummarizationMiddleware
from pi_context.messages import text_of
from pi_context.store import MemoryStore, SessionRef, SessionStore, open_store


@pytest.fixture
async def store() -> AsyncIterator[SessionStore]:
    opened = await open_store("memory:")
    yield opened
    await opened.aclose()


def _agent(mw: PiSummarizationMiddleware, saver: InMemorySaver, *replies: str) -> Any:
    model = FakeToolChatModel(messages=iter([AIMessage(text) for text in replies]))
    return create_agent(model, [], middleware=[mw], checkpointer=saver)


def _thread(thread_id: str) -> Any:
    return {"configurable": {"thread_id": thread_id}}


def _texts(entries: list[dict[str, Any]]) -> list[str]:
    return [
        text_of(entry["message"]["content"])
        for entry in entries
        if entry["type"] == "message" and entry["message"]["role"] in ("user", "assistant")
    ]


async def test_each_thread_is_a_stored_session_created_by_its_first_turn(
    store: SessionStore,
) -> None:
    mw = PiSummarizationMiddleware(store=store, tenant="acme", context_window=8_000)
    agent = _agent(mw, InMemorySaver(), "four", "nine")
    await agent.ainvoke({"messages": [HumanMessage("two plus two?")]}, _thread("t-1"))
    await agent.ainvoke({"messages": [HumanMessage("three squared?")]}, _thread("t-2"))
    assert _texts((await store.load(SessionRef("acme", "t-1"))).entries) == [
        "two plus two?",
        "four",
    ]
    assert _texts((await store.load(SessionRef("acme", "t-2"))).entries) == [
        "three squared?",
        "nine",
    ]
    with pytest.raises(RuntimeError, match="one record per thread"):
        _ = mw.engine


async def test_two_instances_on_one_thread_see_each_others_turns(store: SessionStore) -> None:
    saver = InMemorySaver()  # the graph state both replicas share, as a PostgreSQL saver would
    a = _agent(
        PiSummarizationMiddleware(store=store, context_window=8_000),
        saver,
        "first answer",
        "third answer",
    )
    b = _agent(PiSummarizationMiddleware(store=store, context_window=8_000), saver, "second answer")
    await a.ainvoke({"messages": [HumanMessage("first question")]}, _thread("t-3"))
    await b.ainvoke({"messages": [HumanMessage("second question")]}, _thread("t-3"))
    await a.ainvoke({"messages": [HumanMessage("third question")]}, _thread("t-3"))
    stored = (await store.load(SessionRef("", "t-3"))).entries
    assert _texts(stored) == [
        "first question",
        "first answer",
        "second question",
        "second answer",
        "third question",
        "third answer",
    ]
    assert [e["parentId"] for e in stored][1:] == [e["id"] for e in stored][:-1]


async def test_the_sync_api_over_a_store_is_refused_with_the_reason(store: SessionStore) -> None:
    agent = _agent(PiSummarizationMiddleware(store=store, context_window=8_000), InMemorySaver())
    with pytest.raises(TypeError, match="async API"):
        agent.invoke({"messages": [HumanMessage("hi")]}, _thread("t-4"))


async def test_a_run_without_a_thread_id_is_refused(store: SessionStore) -> None:
    mw = PiSummarizationMiddleware(store=store, context_window=8_000)
    model = FakeToolChatModel(messages=iter([AIMessage("hello")]))
    agent = create_agent(model, [], middleware=[mw])
    with pytest.raises(ValueError, match="thread_id"):
        await agent.ainvoke({"messages": [HumanMessage("hi")]})


def test_mistakes_fail_at_the_call(tmp_path: Path) -> None:
    store = MemoryStore()
    with pytest.raises(ValueError, match="either store= or session_file="):
        PiSummarizationMiddleware(
            store=store, session_file=tmp_path / "s.jsonl", context_window=8_000
        )
    with pytest.raises(ValueError, match="pass store= too"):
        PiSummarizationMiddleware(
            session_file=tmp_path / "s.jsonl", tenant="acme", context_window=8_000
        )


async def test_recall_finds_what_compaction_replaced_in_the_thread(
    store: SessionStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    mw = PiSummarizationMiddleware(store=store, context_window=2_000, keep_recent_tokens=200)
    call = {"name": "recall", "args": {"query": "harbor code"}, "id": "r1", "type": "tool_call"}
    replies = [AIMessage("noted " + "lorem ipsum " * 200) for _ in range(7)]
    model = FakeToolChatModel(
        messages=iter([*replies, AIMessage("", tool_calls=[call]), AIMessage("TEAL-4417")])
    )
    agent = create_agent(model, [mw.recall_tool()], middleware=[mw], checkpointer=InMemorySaver())
    prompts = ["the harbor code is TEAL-4417", *[f"question {i}" for i in range(6)]]
    for prompt in [*prompts, "what was the harbor code?"]:
        state = await agent.ainvoke({"messages": [HumanMessage(prompt)]}, _thread("t-r"))
    stored = (await store.load(SessionRef("", "t-r"))).entries
    assert any(e["type"] == "compaction" for e in stored)
    results = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert len(results) == 1
    assert "TEAL-4417" in str(results[0].content)
