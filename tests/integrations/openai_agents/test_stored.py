"""PiSession over a session store: the conversation id is the stored session's id."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message

from pi_context.errors import StoreUnavailableError
from pi_context.integrations.openai_agents import PiSession
from pi_context.integrations.recall import recall
from pi_context.store import MemoryStore, SessionRef, SessionStore, open_store

set_tracing_disabled(True)


@pytest.fixture
async def store() -> AsyncIterator[SessionStore]:
    opened = await open_store("memory:")
    yield opened
    await opened.aclose()


def _agent(*replies: str) -> Agent[Any]:
    model = ScriptedModel([[assistant_message(text)] for text in replies])
    return Agent(name="helper", instructions="Answer.", model=model)


def _texts(entries: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for entry in entries:
        if entry["type"] == "message":
            content = entry["message"]["content"]
            out.append(content if isinstance(content, str) else content[0]["text"])
    return out


async def test_the_conversation_is_created_on_first_use_and_stored_per_turn(
    store: SessionStore,
) -> None:
    session = PiSession("conv-1", store=store, tenant="acme", context_window=8_000)
    with pytest.raises(RuntimeError, match="opens at the session's first use"):
        _ = session.engine
    await Runner.run(_agent("four"), "two plus two?", session=session)
    stored = await store.load(SessionRef("acme", "conv-1"))
    assert stored.header["id"] == "conv-1"
    assert _texts(stored.entries) == ["two plus two?", "four"]
    assert session.engine.binding is not None
    assert not session.engine.binding.pending
    # another tenant holds nothing of it
    other = PiSession("conv-1", store=store, tenant="other", context_window=8_000)
    assert await other.get_items() == []


async def test_two_instances_on_one_conversation_see_each_others_turns(
    store: SessionStore,
) -> None:
    a = PiSession("conv-2", store=store, context_window=8_000)
    b = PiSession("conv-2", store=store, context_window=8_000)
    await Runner.run(_agent("first answer"), "first question", session=a)
    assert [i.get("role") for i in await b.get_items()] == ["user", "assistant"]
    await Runner.run(_agent("second answer"), "second question", session=b)
    # a's next run starts from the store: b's turn is in its history, nothing is repeated
    await Runner.run(_agent("third answer"), "third question", session=a)
    stored = await store.load(SessionRef("", "conv-2"))
    assert _texts(stored.entries) == [
        "first question",
        "first answer",
        "second question",
        "second answer",
        "third question",
        "third answer",
    ]
    parents = [e["parentId"] for e in stored.entries]
    assert parents[1:] == [e["id"] for e in stored.entries][:-1]  # one chain


async def test_a_write_on_a_stale_session_is_recorded_again_on_the_stored_one(
    store: SessionStore,
) -> None:
    a = PiSession("conv-3", store=store, context_window=8_000)
    b = PiSession("conv-3", store=store, context_window=8_000)
    await a.add_items([{"role": "user", "content": "from a"}])
    await b.get_items()
    await b.add_items([{"role": "user", "content": "from b"}])
    await a.add_items([{"role": "user", "content": "a again"}])  # a's leaf moved: reopened
    stored = await store.load(SessionRef("", "conv-3"))
    assert _texts(stored.entries) == ["from a", "from b", "a again"]
    assert [i["content"] for i in await a.get_items()] == ["from a", "from b", "a again"]


async def test_a_failed_commit_raises_and_keeps_the_entries_for_the_next_one(
    store: SessionStore,
) -> None:
    session = PiSession("conv-4", store=store, context_window=8_000)
    await session.get_items()
    real = store.append
    calls = 0

    async def failing(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise StoreUnavailableError("injected: the connection broke")
        return await real(*args, **kwargs)

    assert isinstance(store, MemoryStore)
    store.append = failing  # type: ignore[method-assign]
    with pytest.raises(StoreUnavailableError, match="injected"):
        await session.add_items([{"role": "user", "content": "kept"}])
    assert _texts((await store.load(SessionRef("", "conv-4"))).entries) == []
    await session.add_items([{"role": "user", "content": "next"}])
    assert _texts((await store.load(SessionRef("", "conv-4"))).entries) == ["kept", "next"]


async def _kept_then_moved(store: SessionStore, conversation: str) -> list[str]:
    """``a``'s add_items fails before the append (its item kept), ``b`` appends, ``a``'s next
    add_items finds the conversation moved: the texts stored in the end."""
    a = PiSession(conversation, store=store, context_window=8_000)
    b = PiSession(conversation, store=store, context_window=8_000)
    await a.get_items()
    real = store.append
    calls = 0

    async def failing_once(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise StoreUnavailableError("injected: the connection broke")
        return await real(*args, **kwargs)

    store.append = failing_once  # type: ignore[method-assign]
    with pytest.raises(StoreUnavailableError, match="injected"):
        await a.add_items([{"role": "user", "content": "A"}])
    await b.add_items([{"role": "user", "content": "B"}])
    await a.add_items([{"role": "user", "content": "C"}])  # moved: reopened, A recorded again
    stored = (await store.load(SessionRef("", conversation))).entries
    assert [i["content"] for i in await a.get_items()] == ["B", "A", "C"]
    return _texts(stored)


async def test_an_item_kept_by_a_failed_commit_survives_another_replicas_append(
    store: SessionStore,
) -> None:
    assert await _kept_then_moved(store, "conv-5") == ["B", "A", "C"]


async def test_on_postgresql_an_item_kept_by_a_failed_commit_survives_another_replicas_append(
    pg_url: str,
) -> None:
    store = await open_store(pg_url)
    try:
        await store.migrate()
        assert await _kept_then_moved(store, "conv-pg-kept") == ["B", "A", "C"]
    finally:
        await store.aclose()


def test_mistakes_fail_at_the_call(tmp_path: Path) -> None:
    store = MemoryStore()
    with pytest.raises(ValueError, match="either store= or session_file="):
        PiSession("c", store=store, session_file=tmp_path / "s.jsonl", context_window=8_000)
    with pytest.raises(ValueError, match="needs the conversation's id"):
        PiSession(store=store, context_window=8_000)
    with pytest.raises(ValueError, match="pass store= too"):
        PiSession(session_file=tmp_path / "s.jsonl", tenant="acme", context_window=8_000)
    with pytest.raises(ValueError, match="invalid tenant"):
        PiSession("c", store=store, tenant="a b", context_window=8_000)
    with pytest.raises(TypeError, match="SessionStore"):
        PiSession("c", store="memory:", context_window=8_000)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="context_window"):
        PiSession("c", store=store, context_window=0)


async def test_on_postgresql_two_instances_share_a_conversation_and_recall_what_compaction_replaced(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    store = await open_store(pg_url)
    try:
        await store.migrate()
        a = PiSession("conv-pg", store=store, tenant="acme", context_window=2_000)
        b = PiSession("conv-pg", store=store, tenant="acme", context_window=2_000)
        await Runner.run(
            _agent("noted: the harbor code is TEAL-4417"), "remember the harbor code", session=a
        )
        for i in range(6):
            await Runner.run(_agent(f"answer {i} " + "filler " * 150), f"question {i}", session=b)
        # a's next run sees b's turns
        items = await a.get_items()
        assert [i.get("content") for i in items if i.get("role") == "user"][-1] == "question 5"
        await a.run_compaction({"force": True})
        assert a.last_outcome is not None
        assert a.last_outcome.compacted
        ref = SessionRef("acme", "conv-pg")
        stored = (await store.load(ref)).entries
        assert [e["type"] for e in stored][-1] == "compaction"  # a's forced one, stored
        # b opens the compacted conversation again: the summary leads its history ...
        history = await b.get_items()
        assert "TEAL-4417" not in str(history[1:])
        # ... and the replaced turn comes back word for word through recall and the store
        found = await recall(b.engine, "harbor code")
        assert "TEAL-4417" in found
        hits = await store.search(ref, "harbor code")
        assert any("TEAL-4417" in hit.snippet for hit in hits)
    finally:
        await store.aclose()
