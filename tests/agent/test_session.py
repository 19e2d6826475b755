"""AgentSession: prompts, patches, queueing, abort, retries, stats."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pi_context.errors import PiContextError
from pi_context.events import (
    AgentSettled,
    AutoRetryStart,
    CacheUpdate,
    QueueUpdate,
    ToolExecutionEnd,
)
from pi_context.messages import text_of
from pi_context.session import Session, convert_to_llm
from pi_context.testing import ScriptedModel, failure, reply

from .conftest import GateTool, MakeSession
from .fakes import key_of


def kinds(session: Any) -> list[str]:
    return [f"{e.type}:{e.role}" if e.role else e.type for e in session.session.entries]


async def test_first_prompt_stores_the_full_prompt_then_nothing_until_it_changes(
    make_session: MakeSession,
) -> None:
    model = ScriptedModel([reply("one"), reply("two")])
    sess = await make_session(model)
    events = await sess.run("hello")
    assert isinstance(events[-1], AgentSettled)
    await sess.run("again")
    assert kinds(sess) == [
        "message:system",
        "message:user",
        "message:assistant",
        "message:user",
        "message:assistant",
    ]
    system = sess.session.entries[0].message
    assert system is not None
    assert next(iter(system["sections"])) == "preamble"  # type: ignore[typeddict-item]
    assert [t["name"] for t in system["toolsAdded"]] == ["read", "bash", "edit", "write"]  # type: ignore[typeddict-item]
    # Both requests start with the same system message: the second extends the first.
    first, second = model.requests
    assert second.messages[: len(first.messages)] == first.messages
    model.assert_complete()


async def test_tools_run_in_the_project(make_session: MakeSession, project_dir: Path) -> None:
    model = ScriptedModel(
        [
            reply(tool_calls=[("write", {"path": "notes.txt", "content": "alpha\nbeta\n"})]),
            reply(tool_calls=[("read", {"path": "notes.txt"})]),
            reply(tool_calls=[("edit", {"path": "notes.txt", "oldText": "zzz", "newText": "y"})]),
            reply("done"),
        ]
    )
    sess = await make_session(model)
    events = await sess.run("work")
    assert (project_dir / "notes.txt").read_text() == "alpha\nbeta\n"
    ends = [e for e in events if isinstance(e, ToolExecutionEnd)]
    assert [e.is_error for e in ends] == [False, False, True]
    assert "alpha" in text_of(ends[1].result["content"])


async def test_abort_while_streaming_leaves_a_valid_session(make_session: MakeSession) -> None:
    model = ScriptedModel([reply("slow", delay=3600)])
    sess = await make_session(model)
    seen: list[str] = []

    async def consume() -> None:
        async for event in sess.prompt("go"):
            seen.append(event.type)
            if event.type == "message_start" and len(model.requests) == 1:
                sess.abort()

    await consume()
    assert seen[-1] == "agent_settled"
    assert not sess.busy
    last = sess.session.entries[-1].message
    assert last is not None
    assert last["stopReason"] == "aborted"  # type: ignore[typeddict-item]
    reopened = sess.session.projection().messages
    assert [m["role"] for m in reopened] == ["system", "user", "assistant"]


async def test_prompt_while_busy_is_queued_and_delivered(make_session: MakeSession) -> None:
    tool = GateTool()
    model = ScriptedModel([reply(tool_calls=[("wait", {})]), reply("saw both")])
    sess = await make_session(model, tools=[tool])

    async def first() -> list[str]:
        return [e.type async for e in sess.prompt("start")]

    task = asyncio.create_task(first())
    await tool.entered.wait()
    assert sess.busy
    queued = [e async for e in sess.prompt("and this")]
    assert isinstance(queued[0], QueueUpdate)
    assert list(queued[0].steering) == ["and this"]
    tool.gate.set()
    seen = await task
    assert "queue_update" in seen
    texts = [text_of(m["content"]) for m in model.requests[1].messages if m["role"] == "user"]
    assert texts == ["start", "and this"]
    roles = [m["role"] for m in sess.session.projection().messages]
    assert roles == ["system", "user", "assistant", "toolResult", "user", "assistant"]


async def test_transient_error_is_retried_after_omitting_the_attempt(
    make_session: MakeSession,
) -> None:
    model = ScriptedModel([failure("429 rate limited", "transient", status=429), reply("ok")])
    sess = await make_session(model)
    events = await sess.run("hi")
    assert any(isinstance(e, AutoRetryStart) for e in events)
    assert [e.to_json()["willRetry"] for e in events if e.type == "agent_end"] == [True, False]
    assert kinds(sess)[-3:] == ["message:assistant", "context_edit", "message:assistant"]
    # The retried request no longer carries the failed attempt.
    assert [m["role"] for m in model.requests[1].messages] == ["system", "user"]
    ends = [e for e in events if e.type == "auto_retry_end"]
    assert ends[0].to_json() == {"type": "auto_retry_end", "success": True, "attempt": 1}


async def test_authentication_error_is_not_retried(make_session: MakeSession) -> None:
    model = ScriptedModel([failure("invalid x-api-key", "authentication", status=401)])
    sess = await make_session(model)
    await sess.run("hi")
    model.assert_complete()
    assert kinds(sess)[-1] == "message:assistant"


async def test_no_model_fails_clearly(make_session: MakeSession) -> None:
    sess = await make_session(None)
    with pytest.raises(PiContextError, match="No model"):
        await sess.run("hi")


async def test_stats_sum_usage_and_cache(make_session: MakeSession) -> None:
    model = ScriptedModel(
        [
            reply("a", input_tokens=100, output_tokens=10, cache_write=900),
            reply("b", input_tokens=50, output_tokens=5, cache_read=900),
        ]
    )
    sess = await make_session(model)
    events = await sess.run("one")
    events += await sess.run("two")
    stats = sess.stats()
    assert stats.tokens == 100 + 10 + 900 + 50 + 5 + 900
    assert stats.cache_read == 900
    assert stats.cache_write == 900
    assert stats.hit_ratio == pytest.approx(900 / (100 + 900 + 50 + 900))
    assert stats.context_window == 128_000
    assert stats.requests == 2
    assert stats.context_tokens == sess.context_tokens() == 50 + 5 + 900
    updates = [e for e in events if isinstance(e, CacheUpdate)]
    assert [u.miss_cause for u in updates] == [None, None]


async def test_session_file_round_trip(make_session: MakeSession, project_dir: Path) -> None:
    path = project_dir.parent / "s.jsonl"
    model = ScriptedModel([reply("one")])
    sess = await make_session(model, session_file=path)
    await sess.run("hello")
    sess.close()
    reopened = Session.open(path)
    assert [m["role"] for m in reopened.projection().messages] == ["system", "user", "assistant"]


async def test_skill_command_is_expanded(make_session: MakeSession, project_dir: Path) -> None:
    skill = project_dir / ".pi" / "skills" / "greet"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greet\ndescription: Say hi.\n---\nWave.\n")
    model = ScriptedModel([reply("ok")])
    sess = await make_session(model)
    assert sess.expand_skill_command("plain") == "plain"
    expanded = sess.expand_skill_command("/skill:greet loudly")
    assert expanded.startswith('<skill name="greet"')
    assert expanded.endswith("loudly")
    await sess.run("/skill:greet loudly")
    user = model.requests[0].messages[-1]
    assert text_of(user["content"]).startswith('<skill name="greet"')


async def test_reload_patches_only_the_changed_section(
    make_session: MakeSession, project_dir: Path
) -> None:
    model = ScriptedModel([reply("one"), reply("two"), reply("three")])
    sess = await make_session(model)
    await sess.run("one")
    await sess.reload()
    await sess.run("two")  # nothing changed: no new system message
    (project_dir / "AGENTS.md").write_text("Use tabs.\n")
    await sess.reload()
    events = await sess.run("three")
    systems = [e.message for e in sess.session.entries if e.role == "system"]
    assert len(systems) == 2
    assert list(key_of(systems[1], "sections")) == ["project_context"]
    updates = [e for e in events if isinstance(e, CacheUpdate)]
    assert updates


async def test_default_tools_setting_selects_the_loadout(make_session: MakeSession) -> None:
    model = ScriptedModel([reply("ok")])
    sess = await make_session(model, settings={"defaultTools": ["-bash", "-write"]})
    assert sess.get_active_tools() == ["read", "edit"]
    await sess.run("hi")
    assert [t["name"] for t in model.requests[0].tools] == ["read", "edit"]


def _timeout_description(model: ScriptedModel) -> str:
    [bash] = [t for t in model.requests[0].tools if t["name"] == "bash"]
    return str(bash["parameters"]["properties"]["timeout"]["description"])


@pytest.mark.parametrize(
    ("settings", "described"),
    [
        ({}, "(optional; default 120)"),
        ({"bash": {"defaultTimeoutSeconds": 7.5}}, "(optional; default 7.5)"),
        ({"bash": {"defaultTimeoutSeconds": 0}}, "(optional)"),
    ],
)
async def test_the_bash_timeout_setting_reaches_the_bash_tool(
    make_session: MakeSession, settings: dict[str, Any], described: str
) -> None:
    model = ScriptedModel([reply("ok")])
    sess = await make_session(model, settings=settings)
    await sess.run("hi")
    assert _timeout_description(model).endswith(described)


async def test_the_bash_timeout_setting_is_read_from_the_settings_file(
    make_session: MakeSession, project_dir: Path
) -> None:
    settings_file = project_dir / ".pi" / "settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text('{"bash": {"defaultTimeoutSeconds": 600}}')
    model = ScriptedModel([reply("ok")])
    sess = await make_session(model)
    await sess.run("hi")
    assert _timeout_description(model).endswith("(optional; default 600)")
    settings_file.write_text('{"bash": {"defaultTimeoutSeconds": -1}}')
    with pytest.raises(PiContextError, match=r"bash\.defaultTimeoutSeconds") as caught:
        await make_session(ScriptedModel([]))
    assert str(settings_file) in str(caught.value)


async def test_reload_enables_tools_newly_added_to_default_tools(
    make_session: MakeSession, project_dir: Path
) -> None:
    settings_file = project_dir / ".pi" / "settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text('{"defaultTools": ["read"]}')
    sess = await make_session(ScriptedModel([]))
    assert sess.get_active_tools() == ["read"]
    settings_file.write_text('{"defaultTools": ["read", "bash"]}')
    await sess.reload()
    assert sess.get_active_tools() == ["read", "bash"]


async def test_resume_restores_the_recorded_loadout(
    make_session: MakeSession, project_dir: Path
) -> None:
    path = project_dir.parent / "s.jsonl"
    model = ScriptedModel([reply("ok")])
    sess = await make_session(model, session_file=path, settings={"defaultTools": ["read"]})
    await sess.run("hi")
    sess.close()
    from pi_context.agent.session import AgentSession

    resumed = await AgentSession.open(
        path, model=ScriptedModel([]), agent_dir=project_dir.parent / "agent", trusted=True
    )
    assert resumed.get_active_tools() == ["read"]
    resumed.close()


async def test_requests_match_a_fresh_conversion_after_edits_in_the_middle(
    make_session: MakeSession,
) -> None:
    """The per-request conversions are reused across turns; a context edit or a custom message
    in the middle of the transcript must still reach the model exactly as a fresh pass would."""
    model = ScriptedModel([reply("one"), reply("two"), reply("three"), reply("four")])
    sess = await make_session(model)
    await sess.run("first")
    sess.session.append_custom_message("note", "remember the plan", True, None)
    await sess.run("second")
    first_user = next(e for e in sess.session.entries if e.role == "user")
    sess.session.append_context_edit(
        first_user.id, {"role": "user", "content": "FIRST (edited)", "timestamp": 1}
    )
    await sess.run("third")
    await sess.run("fourth")
    for request in model.requests[-2:]:
        assert request.messages[1]["content"] == "FIRST (edited)"
    expected = convert_to_llm(sess.session.projection().messages[:-1])
    assert model.requests[-1].messages == expected
    assert any(text_of(m["content"]) == "remember the plan" for m in expected)


async def test_loadout_change_after_quiet_turns_is_patched_once(make_session: MakeSession) -> None:
    model = ScriptedModel([reply("a"), reply("b"), reply("c"), reply("d")])
    sess = await make_session(model)
    await sess.run("one")
    await sess.run("two")  # nothing changed: no patch
    sess.set_active_tools(["read", "bash"])
    await sess.run("three")
    await sess.run("four")
    systems = [e.message for e in sess.session.entries if e.role == "system"]
    assert len(systems) == 2
    patch: Any = systems[1]
    assert [t["name"] for t in patch["toolsRemoved"]] == ["edit", "write"]
    assert kinds(sess)[-5:] == [
        "message:system",
        "message:user",
        "message:assistant",
        "message:user",
        "message:assistant",
    ]


async def test_concurrent_edits_of_one_file_both_apply(
    make_session: MakeSession, project_dir: Path
) -> None:
    """Tool calls of one message run concurrently; the file tools serialize per path."""
    (project_dir / "f.txt").write_text("one\ntwo\nthree\n")
    edits = [
        ("edit", {"path": "f.txt", "edits": [{"oldText": "one", "newText": "ONE"}]}),
        ("edit", {"path": "./f.txt", "edits": [{"oldText": "three", "newText": "THREE"}]}),
    ]
    model = ScriptedModel([reply(tool_calls=edits), reply("done")])
    sess = await make_session(model)
    events = await sess.run("edit twice")
    ends = [e for e in events if isinstance(e, ToolExecutionEnd)]
    assert [e.is_error for e in ends] == [False, False]
    assert (project_dir / "f.txt").read_text() == "ONE\ntwo\nTHREE\n"


async def test_abort_right_after_prompt_cancels_it_before_it_starts(
    make_session: MakeSession,
) -> None:
    model = ScriptedModel([reply("never"), reply("second")])
    sess = await make_session(model)
    heard: list[str] = []
    sess.subscribe(lambda event: heard.append(event.type))
    events = sess.prompt("first")
    sess.abort()  # before the iteration begins: no run exists yet
    seen = [e async for e in events]
    assert [e.type for e in seen] == ["agent_settled"]
    assert isinstance(seen[0], AgentSettled)
    assert seen[0].aborted
    assert heard == ["agent_settled"]
    assert model.requests == []
    assert [e.type for e in sess.session.entries] == []
    # the abort was spent on that prompt: the next one runs normally
    await sess.run("again")
    assert [text_of(m["content"]) for m in model.requests[0].messages if m["role"] == "user"] == [
        "again"
    ]


async def test_abort_between_run_creation_and_its_first_step_settles_it(
    make_session: MakeSession,
) -> None:
    model = ScriptedModel([reply("never")])
    sess = await make_session(model)
    events = sess.prompt("first")
    first = asyncio.ensure_future(anext(events))
    await asyncio.sleep(0)  # the iteration has created the run task, which has not stepped yet
    assert sess.busy
    sess.abort()
    settled = await first
    assert isinstance(settled, AgentSettled)
    assert settled.aborted
    assert [e async for e in events] == []
    assert model.requests == []
    assert not sess.busy


async def test_abort_while_idle_does_not_cancel_a_later_prompt(make_session: MakeSession) -> None:
    model = ScriptedModel([reply("one")])
    sess = await make_session(model)
    sess.abort()
    events = await sess.run("hello")
    assert isinstance(events[-1], AgentSettled)
    assert not events[-1].aborted
    model.assert_complete()


async def test_create_names_the_session_header(
    make_session: MakeSession, project_dir: Path
) -> None:
    sid = "0196f1c2-7b3a-7000-8000-00000000abcd"
    stamp = "2026-01-02T03:04:05.678Z"
    sess = await make_session(
        ScriptedModel([reply("one")]),
        session_file=project_dir.parent / "named.jsonl",
        session_id=sid,
        timestamp=stamp,
    )
    assert (sess.session.header["id"], sess.session.header["timestamp"]) == (sid, stamp)
    await sess.run("hello")
    sess.close()
    reopened = Session.open(project_dir.parent / "named.jsonl")
    assert (reopened.id, reopened.header["timestamp"]) == (sid, stamp)
    reopened.close()


async def test_compaction_settings_fit_a_small_model_window(make_session: MakeSession) -> None:
    from pi_context.model import ModelInfo

    small = ScriptedModel(
        [],
        model_info=ModelInfo(
            provider="scripted", id="tiny", api="scripted", context_window=8192, max_tokens=1024
        ),
    )
    sess = await make_session(small)
    settings = sess.compaction_settings()
    assert (settings.reserve_tokens, settings.keep_recent_tokens) == (8192 // 3, 8192 // 10)
    big = await make_session(ScriptedModel([]))
    assert big.compaction_settings().reserve_tokens == 16384
