"""The session replacement engine (``/fork``, ``/clone``, ``/new``, ``/resume``): what the new
session holds, what is written, and what extensions are told.

An extension file in the agent dir records every lifecycle event it receives in a JSON-lines
log, and cancels when a flag file exists, so each session (old and new) loads it for real.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from pi_context.agent.session import AgentSession
from pi_context.cli.app.app import AppConfig, RunningAgent
from pi_context.cli.app.session_replacement import SwitchCancelledError
from pi_context.errors import PiContextError
from pi_context.model import ModelInfo
from pi_context.testing import ScriptedModel, reply

RECORDER = """
import json
from pathlib import Path

LOG = Path({log!r})
CANCEL = Path({cancel!r})


def _write(record):
    with LOG.open("a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\\n")


def register(pi):
    @pi.on("session_start")
    def start(event, ctx):
        _write({{"event": "start", "reason": event.reason,
                 "previous": event.previous_session_file}})

    @pi.on("session_shutdown")
    def shutdown(event, ctx):
        _write({{"event": "shutdown", "reason": event.reason,
                 "target": event.target_session_file}})

    @pi.on("session_before_fork")
    def before_fork(event, ctx):
        _write({{"event": "before_fork", "entryId": event.entry_id,
                 "position": event.position}})
        return {{"cancel": True}} if CANCEL.exists() else None

    @pi.on("session_before_switch")
    def before_switch(event, ctx):
        _write({{"event": "before_switch", "reason": event.reason,
                 "target": event.target_session_file}})
        return {{"cancel": True}} if CANCEL.exists() else None

    @pi.on("model_select")
    def model_select(event, ctx):
        previous = event.previous_model.id if event.previous_model is not None else None
        _write({{"event": "model_select", "model": event.model.id, "previous": previous,
                 "source": event.source}})

    @pi.on("thinking_level_select")
    def thinking(event, ctx):
        _write({{"event": "thinking", "level": event.level,
                 "previous": event.previous_level}})
"""


class World:
    def __init__(self, tmp: Path) -> None:
        self.project = tmp / "proj"
        self.project.mkdir()
        self.agent_dir = tmp / "agent"
        (self.agent_dir / "extensions").mkdir(parents=True)
        self.sessions = tmp / "sessions"
        self.log = tmp / "events.jsonl"
        self.cancel = tmp / "cancel"
        (self.agent_dir / "extensions" / "recorder.py").write_text(
            RECORDER.format(log=str(self.log), cancel=str(self.cancel)), encoding="utf-8"
        )

    def config(self, *, in_memory: bool = False) -> AppConfig:
        return AppConfig(
            cwd=str(self.project),
            agent_dir=self.agent_dir,
            session_dir=None if in_memory else self.sessions,
            model_resolver=lambda spec, resumed: None,
        )

    def events(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        lines = self.log.read_text(encoding="utf-8").splitlines()
        self.log.unlink()
        return [json.loads(line) for line in lines]


@pytest.fixture
def replacement_world(tmp_path: Path) -> World:
    return World(tmp_path)


async def _conversation(config: AppConfig, *texts: str) -> RunningAgent:
    model = ScriptedModel([reply(f"answer {n}") for n in range(len(texts))])
    app = RunningAgent(await config.create(model), config)
    for text in texts:
        await app.agent.run(text)
    return app


def _users(session: Any) -> list[str]:
    return [
        e.data["message"]["content"][0]["text"]
        for e in session.branch_view()
        if e.type == "message" and e.role == "user"
    ]


async def test_fork_before_a_user_message_keeps_the_path_before_it(
    replacement_world: World,
) -> None:
    app = await _conversation(replacement_world.config(), "one", "two", "three")
    old_file = app.session.file_path
    assert old_file is not None
    rows = app.fork_messages()
    assert [r.text for r in rows] == ["one", "two", "three"]
    replacement_world.events()

    forked, text = await app.fork_before(rows[1].entry_id)

    assert text == "two"
    assert _users(forked.session) == ["one"]
    new_file = forked.session.file_path
    assert new_file is not None
    assert new_file != old_file
    assert new_file.parent == old_file.parent
    header = json.loads(new_file.read_text(encoding="utf-8").splitlines()[0])
    assert header["parentSession"] == str(old_file)
    assert replacement_world.events() == [
        {"event": "before_fork", "entryId": rows[1].entry_id, "position": "before"},
        {"event": "shutdown", "reason": "fork", "target": str(new_file)},
        {"event": "start", "reason": "fork", "previous": str(old_file)},
        {"event": "model_select", "model": "scripted-model", "previous": None, "source": "restore"},
    ]
    await forked.agent.aclose()


async def test_fork_before_a_message_without_parent_starts_empty(replacement_world: World) -> None:
    config = replacement_world.config()
    replacement_world.sessions.mkdir()
    first = replacement_world.sessions / "first.jsonl"
    records = [
        {
            "type": "session",
            "version": 3,
            "id": "s1",
            "timestamp": "2026-01-05T10:00:00.000Z",
            "cwd": str(replacement_world.project),
        },
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "2026-01-05T10:00:01.000Z",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "very first"}],
                "timestamp": 1,
            },
        },
    ]
    first.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    agent = await AgentSession.open(first, agent_dir=replacement_world.agent_dir)
    app = RunningAgent(agent, config)
    [row] = app.fork_messages()
    assert agent.session.get(row.entry_id).parent_id is None  # type: ignore[union-attr]

    forked, text = await app.fork_before(row.entry_id)

    assert text == "very first"
    assert _users(forked.session) == []
    assert forked.session.header.get("parentSession") == str(first)
    await forked.agent.aclose()


async def test_fork_refuses_an_entry_that_is_not_a_user_message(replacement_world: World) -> None:
    app = await _conversation(replacement_world.config(), "one")
    answer = next(e for e in app.session.entries if e.role == "assistant")
    with pytest.raises(PiContextError, match=r"^Invalid entry ID for forking$"):
        await app.fork_before(answer.id)
    with pytest.raises(PiContextError, match=r"^Invalid entry ID for forking$"):
        await app.fork_before("no-such-entry")
    await app.agent.aclose()


async def test_clone_copies_the_path_relabels_and_writes_at_once(replacement_world: World) -> None:
    app = await _conversation(replacement_world.config(), "one", "two")
    first_user = next(e for e in app.session.entries if e.role == "user")
    app.session.append_label(first_user.id, "start here")
    old_file = app.session.file_path
    leaf = app.session.leaf_id
    replacement_world.events()

    cloned = await app.clone()

    session = cloned.session
    assert _users(session) == ["one", "two"]
    assert session.file_path is not None
    assert session.file_path.is_file()
    assert session.header.get("parentSession") == str(old_file)
    labels = [e for e in session.entries if e.type == "label"]
    assert [(e.data["targetId"], e.data["label"]) for e in labels] == [
        (first_user.id, "start here")
    ]
    assert session.entries[-1].type == "label"  # re-created after the path
    events = replacement_world.events()
    assert events[0] == {"event": "before_fork", "entryId": leaf, "position": "at"}
    assert [e["event"] for e in events[1:3]] == ["shutdown", "start"]
    await cloned.agent.aclose()


async def test_clone_of_an_in_memory_session_stays_in_memory(replacement_world: World) -> None:
    app = await _conversation(replacement_world.config(in_memory=True), "one")
    cloned = await app.clone()
    assert cloned.session.file_path is None
    assert _users(cloned.session) == ["one"]
    assert not replacement_world.sessions.exists()
    await cloned.agent.aclose()


async def test_clone_without_entries_says_nothing_to_clone(replacement_world: World) -> None:
    agent = await AgentSession.create(
        cwd=replacement_world.project, agent_dir=replacement_world.agent_dir
    )
    app = RunningAgent(agent, replacement_world.config(in_memory=True))
    with pytest.raises(PiContextError, match=r"^Nothing to clone yet$"):
        await app.clone()
    await agent.aclose()


async def test_extensions_may_cancel_fork_clone_new_and_resume(replacement_world: World) -> None:
    app = await _conversation(replacement_world.config(), "one")
    other = await _conversation(replacement_world.config(), "elsewhere")
    other_file = other.session.file_path
    assert other_file is not None
    await other.agent.aclose()
    replacement_world.cancel.touch()
    replacement_world.events()
    [row] = app.fork_messages()
    for attempt in (
        lambda: app.fork_before(row.entry_id),
        app.clone,
        app.new_session,
        lambda: app.open_session(other_file),
    ):
        with pytest.raises(SwitchCancelledError):
            await attempt()
    events = replacement_world.events()
    assert [e["event"] for e in events] == [
        "before_fork",
        "before_fork",
        "before_switch",
        "before_switch",
    ]
    assert events[2]["reason"] == "new"
    assert events[3] == {"event": "before_switch", "reason": "resume", "target": str(other_file)}
    # the old session goes on, untouched
    app.agent.model.add(reply("still here"))  # type: ignore[attr-defined]
    await app.agent.run("two")
    assert _users(app.session) == ["one", "two"]
    await app.agent.aclose()


async def test_new_and_resume_tell_extensions_why(replacement_world: World) -> None:
    app = await _conversation(replacement_world.config(), "one")
    first = app.session.file_path
    replacement_world.events()
    fresh = await app.new_session()
    assert replacement_world.events() == [
        {"event": "before_switch", "reason": "new", "target": None},
        {"event": "shutdown", "reason": "new", "target": None},
        {"event": "start", "reason": "new", "previous": str(first)},
    ]
    assert first is not None
    back = await fresh.open_session(first)
    events = replacement_world.events()
    assert events[0] == {"event": "before_switch", "reason": "resume", "target": str(first)}
    assert events[1] == {"event": "shutdown", "reason": "resume", "target": str(first)}
    assert events[2]["event"] == "start"
    assert events[2]["reason"] == "resume"
    await back.agent.aclose()
    assert replacement_world.events() == [{"event": "shutdown", "reason": "quit", "target": None}]


async def test_model_and_thinking_changes_reach_extensions(replacement_world: World) -> None:
    app = await _conversation(replacement_world.config(), "one")
    replacement_world.events()
    thinker = ScriptedModel(
        [],
        model_info=ModelInfo(
            provider="scripted",
            id="thinker",
            api="scripted",
            reasoning=True,
            context_window=100_000,
            max_tokens=1000,
        ),
    )
    app.agent.switch_model(thinker)
    app.agent.set_thinking_level("high")
    app.agent.set_thinking_level("high")  # no change: nothing told
    plain = dataclasses.replace(
        thinker, model_info=dataclasses.replace(thinker.info, id="plain", reasoning=False)
    )
    app.agent.switch_model(plain, source="cycle")
    await app.agent.settle_notices()
    assert replacement_world.events() == [
        {
            "event": "model_select",
            "model": "thinker",
            "previous": "scripted-model",
            "source": "set",
        },
        {"event": "thinking", "level": "high", "previous": "off"},
        {"event": "model_select", "model": "plain", "previous": "thinker", "source": "cycle"},
        {"event": "thinking", "level": "off", "previous": "high"},
    ]
    await app.agent.aclose()
