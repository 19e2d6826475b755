"""An AgentSession on a stored session (memory, file and PostgreSQL stores) runs exactly as on
a session file: the same entries, bytes and context after the same prompts, compactions, tree
moves, labels and recalls; one run per session at a time; nothing queued is ever dropped."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from pi_context.agent.session import AgentSession
from pi_context.errors import (
    SessionBusyError,
    SessionNotFoundError,
    StoreError,
    StoreUnavailableError,
)
from pi_context.messages import text_of
from pi_context.model import Model
from pi_context.session import Session
from pi_context.store import SessionRef, SessionStore, open_store
from pi_context.testing import FixedClock, ScriptedModel, SequentialIds, reply
from tests.helpers import no_sleep
from tests.store.helpers import FlakyStore

from .conftest import GateTool

OFFLINE = {"compaction": {"keepRecentTokens": 1, "summarizer": "offline"}, "recall": "auto"}


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture
def store(each_store: SessionStore) -> SessionStore:
    """Each kind of store in turn (``each_store``)."""
    return each_store


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    project, agent = tmp_path / "proj", tmp_path / "agent"
    project.mkdir()
    agent.mkdir()
    return project, agent


def _options(dirs: tuple[Path, Path], model: Model | None, **more: Any) -> dict[str, Any]:
    return {
        "cwd": dirs[0],
        "model": model,
        "agent_dir": dirs[1],
        "trusted": True,
        "ids": SequentialIds(),
        "clock": FixedClock(),
        "sleep": no_sleep,
        "settings": OFFLINE,
        **more,
    }


def _script() -> list[Any]:
    return [
        reply("noted " * 200),
        reply("more " * 200),
        reply(tool_calls=[("recall", {"query": "walrus 4417"})]),
        reply("The walrus code was 4417."),
        reply("again, differently"),
    ]


async def _operations(sess: AgentSession) -> None:
    """Prompts, a manual compaction, a recall, a tree move with a branch summary and a label,
    and a label appended by the caller."""
    await sess.run("Remember: the walrus code is 4417. " + "filler " * 200)
    await sess.run("next " * 200)
    await sess.compact("keep the code")
    await sess.run("What was the walrus code?")
    users = [e for e in sess.session.entries if e.role == "user"]
    await sess.navigate(users[-1].id, summarize=True, label="retry")
    await sess.run("What was the walrus code, once more?")
    first = next(e for e in sess.session.entries if e.role == "assistant")
    sess.session.append_label(first.id, "first answer")
    await sess.commit()


def _context(session: Session) -> list[Any]:
    return [dict(m) for m in session.projection().messages]


async def test_a_stored_session_runs_as_a_file_does(
    store: SessionStore, dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    file_path = tmp_path / "file-session.jsonl"
    file_model = ScriptedModel(_script())
    on_file = await AgentSession.create(
        session_file=file_path, **_options(dirs, file_model, session_id="s1")
    )
    await _operations(on_file)

    stored_model = ScriptedModel(_script())
    stored = await AgentSession.create(
        store=store, tenant="acme", **_options(dirs, stored_model, session_id="s1")
    )
    assert stored.ref == SessionRef("acme", "s1")
    assert on_file.ref is None
    await _operations(stored)

    # the model saw the same requests, and the recall found the compacted-away fact
    assert [r.messages for r in stored_model.requests] == [r.messages for r in file_model.requests]
    recalled = stored_model.requests[3].messages[-1]
    assert recalled["role"] == "toolResult"
    assert "Remember: the walrus code is 4417." in text_of(recalled["content"])
    kinds = [e.type for e in stored.session.entries]
    assert {"compaction", "branch_summary", "label"} <= set(kinds)

    # what the store holds is the file, byte for byte, and nothing is left pending
    assert await store.export_bytes(stored.ref) == file_path.read_bytes()
    await on_file.aclose()
    await stored.aclose()

    # reopened in a new AgentSession (another replica): the same tree and context
    again = await AgentSession.open(
        store=store, ref=SessionRef("acme", "s1"), **_options(dirs, ScriptedModel([]))
    )
    reopened_file = Session.open(file_path)
    assert [e.raw for e in again.session.entries] == [e.raw for e in reopened_file.entries]
    assert again.session.leaf_id == reopened_file.leaf_id
    assert _context(again.session) == _context(reopened_file)
    assert again.session.labels == reopened_file.labels
    await again.aclose()
    reopened_file.close()


async def test_entries_are_stored_at_the_end_of_each_turn(
    store: SessionStore, dirs: tuple[Path, Path]
) -> None:
    tool = GateTool()
    model = ScriptedModel([reply(tool_calls=[("wait", {})]), reply("done")])
    sess = await AgentSession.create(store=store, **_options(dirs, model, tools=[tool]))
    assert sess.ref is not None
    task = asyncio.ensure_future(sess.run("go"))
    await tool.entered.wait()
    # the turn's entries are queued in memory until it ends
    assert (await store.load(sess.ref)).entries == []
    assert [e.role for e in sess._state.binding.pending] == ["system", "user", "assistant"]  # type: ignore[union-attr]
    tool.gate.set()
    await task
    after = await store.load(sess.ref)
    roles = [e["message"]["role"] for e in after.entries if e["type"] == "message"]
    assert roles[-4:] == ["user", "assistant", "toolResult", "assistant"]
    assert not sess._state.binding.pending  # type: ignore[union-attr]
    await sess.aclose()


async def test_a_synchronous_close_refuses_to_drop_uncommitted_entries(
    store: SessionStore, dirs: tuple[Path, Path]
) -> None:
    sess = await AgentSession.create(store=store, **_options(dirs, ScriptedModel([])))
    assert sess.ref is not None
    sess.session.append_message({"role": "user", "content": "not stored yet", "timestamp": 1})
    with pytest.raises(StoreError, match=r"await aclose\(\)") as raised:
        sess.close()
    assert "1 entry" in str(raised.value)
    assert len(sess._state.binding.pending) == 1  # type: ignore[union-attr]
    await sess.aclose()  # still open: aclose commits, then closes
    stored = await store.load(sess.ref)
    assert [e["message"]["content"] for e in stored.entries] == ["not stored yet"]
    again = await AgentSession.open(store=store, ref=sess.ref, **_options(dirs, None))
    again.close()  # nothing uncommitted: closes
    again.close()


async def test_a_synchronous_close_after_a_failed_aclose_closes(dirs: tuple[Path, Path]) -> None:
    store = FlakyStore()
    sess = await AgentSession.create(store=store, **_options(dirs, ScriptedModel([])))
    kept = sess.session.append_message({"role": "user", "content": "kept", "timestamp": 1})
    store.fail = ["lose"]
    with pytest.raises(StoreUnavailableError):
        await sess.aclose()  # the loss is reported here, once
    sess.close()
    assert [e.id for e in sess._state.binding.pending] == [kept.id]  # type: ignore[union-attr]


async def test_a_second_replica_gets_busy_at_once(
    store: SessionStore, dirs: tuple[Path, Path]
) -> None:
    tool = GateTool()
    model = ScriptedModel([reply(tool_calls=[("wait", {})]), reply("done"), reply("second")])
    first = await AgentSession.create(store=store, **_options(dirs, model, tools=[tool]))
    ref = first.ref
    assert ref is not None
    running = asyncio.ensure_future(first.run("go"))
    await tool.entered.wait()
    second = await AgentSession.open(store=store, ref=ref, **_options(dirs, model))
    with pytest.raises(SessionBusyError):
        await second.run("me too")
    with pytest.raises(SessionBusyError):
        await second.compact()
    tool.gate.set()
    await running
    await first.aclose()
    await second.aclose()
    # the lease was released with the run: a replica that opens the session now runs it
    third = await AgentSession.open(store=store, ref=ref, **_options(dirs, model))
    await third.run("now")
    assert (await store.load(ref)).leaf_id == third.session.leaf_id
    await third.aclose()


async def test_mistakes_fail_at_the_call(store: SessionStore, dirs: tuple[Path, Path]) -> None:
    options = _options(dirs, None)
    with pytest.raises(TypeError, match="not both"):
        AgentSession.create(store=store, session_file=dirs[0] / "x.jsonl", **options)
    with pytest.raises(TypeError, match="tenant= needs store="):
        AgentSession.create(tenant="acme", **options)
    with pytest.raises(TypeError, match="needs ref="):
        AgentSession.open(store=store, **options)
    with pytest.raises(TypeError, match="needs store="):
        AgentSession.open(ref=SessionRef("", "x"), **options)
    with pytest.raises(TypeError, match="not both"):
        AgentSession.open(dirs[0] / "x.jsonl", store=store, ref=SessionRef("", "x"), **options)
    with pytest.raises(TypeError, match="ref must be"):
        AgentSession.open(store=store, ref="acme/x", **options)  # type: ignore[arg-type]
    sess = await AgentSession.create(store=store, tenant="acme", session_id="mine", **options)
    with pytest.raises(SessionNotFoundError):
        await AgentSession.open(store=store, ref=SessionRef("other", "mine"), **options)
    with pytest.raises(StoreError, match="already stored"):
        await AgentSession.create(store=store, tenant="acme", session_id="mine", **options)
    await sess.aclose()


async def test_a_file_session_syncs_off_the_event_loop(
    dirs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[threading.Thread] = []
    real_sync = Session.sync

    def sync(self: Session) -> None:
        threads.append(threading.current_thread())
        real_sync(self)

    monkeypatch.setattr(Session, "sync", sync)
    path = tmp_path / "s.jsonl"
    sess = await AgentSession.create(
        session_file=path, **_options(dirs, ScriptedModel([reply("hi")]))
    )
    await sess.run("hello")
    assert threads
    assert all(t is not threading.main_thread() for t in threads)
    assert path.read_bytes().count(b"\n") == 4  # header, system, user, assistant
    await sess.aclose()


async def test_a_failed_commit_raises_from_run_and_loses_nothing(dirs: tuple[Path, Path]) -> None:
    store = FlakyStore()
    model = ScriptedModel([reply("one"), reply("two")])
    sess = await AgentSession.create(store=store, **_options(dirs, model))
    assert sess.ref is not None
    store.fail = ["lose_ack", "lose"]  # the end of the turn, then the end of the run
    events: list[Any] = []
    sess.subscribe(events.append)
    with pytest.raises(StoreUnavailableError):
        await sess.run("hello")
    assert events[-1].type == "agent_settled"  # the run settled, then its commit failed
    pending = [e.role for e in sess._state.binding.pending]  # type: ignore[union-attr]
    assert pending == ["system", "user", "assistant"]
    await sess.run("again")  # the next run's commits store the failed batch once, then more
    stored = await store.load(sess.ref)
    assert [e.id for e in sess.session.entries] == [e["id"] for e in stored.entries]
    assert len({e["id"] for e in stored.entries}) == len(stored.entries) == 5
    await sess.aclose()


async def test_a_message_triggered_run_that_finds_the_session_busy_is_reported(
    dirs: tuple[Path, Path],
) -> None:
    from pi_context.events import AgentEvent, ExtensionFailure
    from pi_context.extensions.events import CustomMessageDraft

    store = await open_store("memory:")
    model = ScriptedModel([reply("reacting")])
    sess = await AgentSession.create(store=store, tenant="acme", **_options(dirs, model))
    ref = sess.ref
    assert ref is not None
    seen: list[AgentEvent] = []
    sess.subscribe(seen.append)
    async with store.lease(ref, owner="another-replica", ttl=30):
        sess.send_message(CustomMessageDraft("alert", "The build broke."), trigger_turn=True)
        await sess.wait_idle()
    failures = [e for e in seen if isinstance(e, ExtensionFailure)]
    assert len(failures) == 1
    assert failures[0].event == "send_message"
    assert "SessionBusyError" in failures[0].error
    assert model.requests == []
    # the message was kept: the next run carries it
    await sess.run("hello")
    sent = [text_of(m["content"]) for m in model.requests[0].messages if m["role"] == "user"]
    assert "The build broke." in sent
    await sess.aclose()
    await store.aclose()


async def test_agent_settled_comes_after_the_lease_is_released(dirs: tuple[Path, Path]) -> None:
    """A caller that starts the next run on ``agent_settled`` (as RPC clients do) finds the
    session idle and its lease free."""
    from pi_context.store import MemoryStore
    from pi_context.store.base import Lease

    order: list[str] = []

    class SlowRelease(MemoryStore):
        async def _release(self, lease: Lease) -> None:
            await asyncio.sleep(0)  # a round trip, as a database's release is
            await super()._release(lease)
            order.append("released")

    store = SlowRelease()
    model = ScriptedModel([reply("one"), reply("two")])
    sess = await AgentSession.create(store=store, tenant="acme", **_options(dirs, model))
    sess.subscribe(lambda e: order.append("settled") if e.type == "agent_settled" else None)
    await sess.run("first")
    assert order == ["released", "settled"]
    await sess.run("second")
    await sess.aclose()


async def test_a_lease_release_that_fails_after_the_run_stored_everything_does_not_fail_it(
    dirs: tuple[Path, Path],
) -> None:
    # The turn's entries are durable; only the release of its lease found the store gone.
    # Raising then would tell the caller the turn failed (a 503, a retried turn, the turn
    # stored twice): the run returns, and the lease expires within its ttl.
    class NoRelease(FlakyStore):
        releases = 0

        async def _release(self, lease: Any) -> None:
            self.releases += 1
            raise StoreUnavailableError("connection lost before the release")

    store = NoRelease()
    model = ScriptedModel([reply("one")])
    sess = await AgentSession.create(store=store, **_options(dirs, model))
    assert sess.ref is not None
    await sess.run("hello")
    assert store.releases == 1
    stored = await store.load(sess.ref)
    assert [e.role for e in sess.session.entries][-2:] == ["user", "assistant"]
    assert [e["id"] for e in stored.entries] == [e.id for e in sess.session.entries]
    assert sess._state.binding.pending == ()  # type: ignore[union-attr]
    await sess.aclose()
