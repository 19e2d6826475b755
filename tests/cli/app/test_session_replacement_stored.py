"""``/new``, ``/fork``, ``/clone`` and ``/resume`` on a stored session (``pictx --session
URL#ID``) stay in its store and tenant: no session file is ever written, a fork's or clone's
copy is stored at once naming its parent's id, and a session file is refused with a notice."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from pi_context.cli.app.app import AppConfig, RunningAgent
from pi_context.cli.app.session_replacement import STORED_RESUMES_STORED
from pi_context.errors import PiContextError
from pi_context.store import SessionRef, SessionStore, open_store
from pi_context.testing import ScriptedModel, reply


class World:
    def __init__(self, tmp: Path) -> None:
        self.project = tmp / "proj"
        self.project.mkdir()
        self.agent_dir = tmp / "agent"
        self.agent_dir.mkdir()
        self.sessions = tmp / "sessions"
        self.config = AppConfig(
            cwd=str(self.project),
            agent_dir=self.agent_dir,
            session_dir=self.sessions,
            model_resolver=lambda spec, resumed: None,
            discover_extensions=False,
            mcp=False,
        )

    def session_files(self) -> list[Path]:
        return sorted(self.sessions.rglob("*.jsonl")) if self.sessions.exists() else []


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[World, SessionStore]]:
    store = await open_store("memory:")
    try:
        yield World(tmp_path), store
    finally:
        await store.aclose()


async def _stored_conversation(
    world: World, store: SessionStore, *texts: str, tenant: str = "acme"
) -> RunningAgent:
    model = ScriptedModel([reply(f"answer {n}") for n in range(len(texts))])
    agent = await world.config.create_stored(store, tenant, model, session_id="conv-1")
    app = RunningAgent(agent, world.config)
    for text in texts:
        await app.agent.run(text)
    return app


def _users(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    return [
        e["message"]["content"][0]["text"]
        for e in entries
        if e["type"] == "message" and e["message"]["role"] == "user"
    ]


async def _ids(store: SessionStore, tenant: str) -> list[str]:
    page = await store.list_sessions(tenant=tenant)
    return sorted(s.ref.id for s in page.sessions)


async def test_new_creates_a_stored_session_in_the_same_tenant(
    world: tuple[World, SessionStore],
) -> None:
    w, store = world
    app = await _stored_conversation(w, store, "one")
    fresh = await app.new_session()
    ref = fresh.agent.ref
    assert ref is not None
    assert ref.tenant == "acme"
    assert ref.id != "conv-1"
    assert fresh.agent.store is store
    assert sorted(await _ids(store, "acme")) == sorted(["conv-1", ref.id])
    assert await _ids(store, "") == []
    assert w.session_files() == []
    await fresh.agent.aclose()


async def test_clone_stores_the_copy_naming_the_parent_id(
    world: tuple[World, SessionStore],
) -> None:
    w, store = world
    app = await _stored_conversation(w, store, "one", "two")
    cloned = await app.clone()
    ref = cloned.agent.ref
    assert ref is not None
    assert ref.tenant == "acme"
    assert ref.id != "conv-1"
    stored = await store.load(ref)  # stored at once, before any run
    assert stored.header["parentSession"] == "conv-1"
    assert _users(stored.entries) == ["one", "two"]
    assert w.session_files() == []
    # it runs on, committing to the store
    await cloned.agent.aclose()


async def test_fork_stores_the_path_before_the_message(world: tuple[World, SessionStore]) -> None:
    w, store = world
    app = await _stored_conversation(w, store, "one", "two", "three")
    rows = app.fork_messages()
    forked, text = await app.fork_before(rows[1].entry_id)
    assert text == "two"
    ref = forked.agent.ref
    assert ref is not None
    assert ref.tenant == "acme"
    stored = await store.load(ref)
    assert stored.header["parentSession"] == "conv-1"
    assert _users(stored.entries) == ["one"]
    # the parent is unchanged
    assert _users((await store.load(SessionRef("acme", "conv-1"))).entries) == [
        "one",
        "two",
        "three",
    ]
    assert w.session_files() == []
    await forked.agent.aclose()


async def test_fork_before_the_first_message_creates_an_empty_stored_session(
    world: tuple[World, SessionStore],
) -> None:
    w, store = world
    app = await _stored_conversation(w, store, "one")
    rows = app.fork_messages()
    forked, text = await app.fork_before(rows[0].entry_id)
    assert text == "one"
    ref = forked.agent.ref
    assert ref is not None
    assert (await store.load(ref)).header["parentSession"] == "conv-1"
    assert w.session_files() == []
    await forked.agent.aclose()


async def test_resume_lists_and_opens_the_tenant_stored_sessions(
    world: tuple[World, SessionStore],
) -> None:
    w, store = world
    app = await _stored_conversation(w, store, "one")
    other = await _stored_conversation(w, store, "elsewhere", tenant="other")
    await other.agent.aclose()
    fresh = await app.new_session()
    fresh_id = fresh.agent.session.id
    rows = await fresh.stored_sessions()
    assert sorted(r[0] for r in rows) == sorted(["conv-1", fresh_id])  # not tenant "other"
    loaded = await fresh.load_stored_session("conv-1")
    back = await fresh.open_stored_session(loaded)
    assert back.agent.ref == SessionRef("acme", "conv-1")
    assert back.agent.cwd == str(w.project)
    assert _users([e.data for e in back.session.entries]) == ["one"]
    # a session file is refused with a notice, the stored session goes on
    file = w.project / "file.jsonl"
    header = {"type": "session", "version": 3, "id": "f", "timestamp": "2026-01-01T00:00:00Z"}
    file.write_text(json.dumps(header) + "\n", encoding="utf-8")
    with pytest.raises(PiContextError, match="stored session resumes only") as refused:
        await back.open_session(file)
    assert str(refused.value) == STORED_RESUMES_STORED
    assert not back.agent.busy
    await back.agent.aclose()


async def test_resume_reads_every_page_of_the_listing(world: tuple[World, SessionStore]) -> None:
    w, store = world
    app = await _stored_conversation(w, store, "one")
    for n in range(130):  # more than one page
        header = {
            "type": "session",
            "version": 3,
            "id": f"s{n:03}",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": str(w.project),
        }
        await store.import_bytes(json.dumps(header).encode() + b"\n", tenant="acme")
    rows = await app.stored_sessions()
    assert len(rows) == 131
    assert len({r[0] for r in rows}) == 131
    await app.agent.aclose()
