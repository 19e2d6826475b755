"""Automatic and manual compaction, overflow recovery and tree navigation through AgentSession."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_context import CompactionFallback
from pi_context.errors import CompactionError, PiContextError, TreeError
from pi_context.events import CompactionEnd, CompactionStart, EntryAppended, TreeNavigated
from pi_context.messages import text_of
from pi_context.model import ModelInfo
from pi_context.testing import ScriptedModel, failure, reply

from .conftest import MakeSession
from .fakes import key_of

OFFLINE = {"compaction": {"keepRecentTokens": 1, "summarizer": "offline"}}
OVERFLOW = "prompt is too long: 200000 tokens > 128000 maximum"


def scripted_info(context_window: int, max_tokens: int) -> ModelInfo:
    """The scripted model's identity with a small context window."""
    return ModelInfo(
        provider="scripted",
        id="scripted-model",
        api="scripted",
        context_window=context_window,
        max_tokens=max_tokens,
    )


def types(sess: Any) -> list[str]:
    return [e.type for e in sess.session.entries]


async def test_overflow_is_recovered_once(make_session: MakeSession) -> None:
    model = ScriptedModel(
        [reply("first answer " * 200), failure(OVERFLOW, "context_overflow"), reply("recovered")]
    )
    sess = await make_session(model, settings=OFFLINE)
    await sess.run("question one " * 200)
    events = await sess.run("question two")
    assert types(sess)[-4:] == ["message", "context_edit", "compaction", "message"]
    failed = sess.session.entries[-4]
    edit = sess.session.entries[-3]
    assert edit.get("targetId") == failed.id
    assert edit.get("replacement") is None
    starts = [e for e in events if isinstance(e, CompactionStart)]
    ends = [e for e in events if isinstance(e, CompactionEnd)]
    assert [s.reason for s in starts] == ["overflow"]
    assert ends[0].will_retry
    assert ends[0].result is not None
    assert any(isinstance(e, EntryAppended) for e in events)
    assert [e.to_json()["willRetry"] for e in events if e.type == "agent_end"] == [True, False]
    # The retry is built from the compacted projection: snapshot system + summary.
    retry = model.requests[-1].messages
    assert retry[0]["role"] == "system"
    assert "summary" in text_of(retry[1]["content"])
    assert text_of(key_of(sess.session.entries[-1].message, "content")) == "recovered"
    model.assert_complete()


async def test_second_overflow_after_recovery_is_reported_not_compacted(
    make_session: MakeSession,
) -> None:
    model = ScriptedModel(
        [
            reply("first answer " * 200),
            failure(OVERFLOW, "context_overflow"),
            failure(OVERFLOW, "context_overflow"),
        ]
    )
    sess = await make_session(model, settings=OFFLINE)
    await sess.run("question one " * 200)
    events = await sess.run("question two")
    ends = [e for e in events if isinstance(e, CompactionEnd)]
    assert len(ends) == 2
    assert ends[1].result is None
    assert ends[1].will_retry is False
    assert ends[1].error_message is not None
    assert "recovery failed" in ends[1].error_message
    assert types(sess).count("compaction") == 1
    model.assert_complete()


async def test_silent_overflow_compacts_without_retry(make_session: MakeSession) -> None:
    small = scripted_info(1000, 100)
    model = ScriptedModel(
        [reply("first " * 200), reply("fine", input_tokens=1500)], model_info=small
    )
    # recall off: its declaration, offered after the first compaction, does not fit this
    # 1,000-token window beside the summary (the guard would refuse the second compaction)
    sess = await make_session(model, settings=OFFLINE, recall="off")
    await sess.run("question one " * 200)
    events = await sess.run("two")
    ends = [e for e in events if isinstance(e, CompactionEnd)]
    assert [(e.reason, e.will_retry) for e in ends] == [("overflow", False)]
    assert types(sess)[-1] == "compaction"
    model.assert_complete()


async def test_threshold_compaction_between_turns(make_session: MakeSession) -> None:
    info = scripted_info(10_000, 1000)
    settings = {
        "compaction": {"keepRecentTokens": 1, "reserveTokens": 2000, "summarizer": "offline"}
    }
    model = ScriptedModel(
        [
            reply("earlier " * 200, input_tokens=1000),
            reply(tool_calls=[("bash", {"command": "echo hi"})], input_tokens=9000),
            reply("after compaction", input_tokens=500),
        ],
        model_info=info,
    )
    sess = await make_session(model, settings=settings)
    await sess.run("first " * 200)
    events = await sess.run("second")
    starts = [e for e in events if isinstance(e, CompactionStart)]
    assert [s.reason for s in starts] == ["threshold"]
    kinds = types(sess)
    # The compaction sits between the tool result and the next assistant message; the
    # system-prompt patch that offers the recall tool from then on follows it.
    assert kinds[-3:] == ["compaction", "message", "message"]
    assert sess.session.entries[-2].role == "system"
    last_request = model.requests[-1].messages
    assert last_request[0]["role"] == "system"
    assert "summary" in text_of(last_request[1]["content"])
    assert [t["name"] for t in model.requests[-1].tools][-1] == "recall"
    model.assert_complete()


async def test_no_between_turn_check_when_the_run_ends(make_session: MakeSession) -> None:
    info = scripted_info(10_000, 1000)
    settings = {"compaction": {"enabled": False}}
    model = ScriptedModel([reply("big", input_tokens=9500)], model_info=info)
    sess = await make_session(model, settings=settings)
    events = await sess.run("x")
    assert not [e for e in events if isinstance(e, CompactionStart)]


async def test_manual_compaction(make_session: MakeSession) -> None:
    model = ScriptedModel([reply("answer " * 200), reply("two " * 200)])
    sess = await make_session(model, settings=OFFLINE)
    with pytest.raises(CompactionError):
        await sess.compact()  # nothing yet
    await sess.run("question " * 200)
    await sess.run("more " * 200)
    seen: list[str] = []
    unsubscribe = sess.subscribe(lambda e: seen.append(e.type))
    result = await sess.compact("keep file names")
    unsubscribe()
    assert seen == ["compaction_start", "compaction_end"]
    assert result["summary"]
    assert types(sess)[-1] == "compaction"
    with pytest.raises(CompactionError, match="Already compacted"):
        await sess.compact()
    stats = sess.stats()
    assert stats.context_tokens is None  # unknown until the next response
    assert sess.context_tokens() is None


async def test_navigate_with_summary(make_session: MakeSession) -> None:
    model = ScriptedModel([reply("A1"), reply("B1"), reply("C1")])
    sess = await make_session(model, settings=OFFLINE)
    await sess.run("first question")
    await sess.run("second question")
    entries = sess.session.entries
    second_user = [e for e in entries if e.role == "user"][1]
    old_leaf = sess.session.leaf_id
    events: list[Any] = []
    sess.subscribe(events.append)
    result = await sess.navigate(second_user.id, summarize=True, label="retry")
    assert result.editor_text == "second question"
    assert result.summary_entry_id is not None
    summary = sess.session.get(result.summary_entry_id)
    assert summary is not None
    assert summary.type == "branch_summary"
    assert summary.parent_id == second_user.parent_id
    assert summary.get("fromId") == old_leaf
    assert sess.session.leaf.type == "label"  # type: ignore[union-attr]
    assert isinstance(events[-1], TreeNavigated)
    await sess.run("second question, again")
    request = model.requests[-1].messages
    wrapped = [text_of(m["content"]) for m in request if m["role"] == "user"]
    assert any("summary" in t for t in wrapped)
    assert wrapped[-1] == "second question, again"
    # The abandoned branch is still in the file.
    assert sess.session.get(old_leaf) is not None  # type: ignore[arg-type]


async def test_navigate_without_summary_and_errors(make_session: MakeSession) -> None:
    model = ScriptedModel([reply("A1")])
    sess = await make_session(model)
    await sess.run("first")
    assistant = next(e for e in sess.session.entries if e.role == "assistant")
    same = await sess.navigate(sess.session.leaf_id)  # type: ignore[arg-type]
    assert not same.cancelled
    system = sess.session.entries[0]
    result = await sess.navigate(system.id)
    assert result.summary_entry_id is None
    assert sess.session.leaf_id == system.id
    await sess.navigate(assistant.id)
    assert sess.session.leaf_id == assistant.id
    with pytest.raises(TreeError, match="not found"):
        await sess.navigate("nope")


async def test_navigation_refused_while_busy(make_session: MakeSession) -> None:
    model = ScriptedModel([reply("slow", delay=3600)])
    sess = await make_session(model)
    agen = sess.prompt("go")
    await agen.__anext__()
    with pytest.raises(PiContextError, match="Wait for the current response"):
        await sess.navigate("x")
    sess.abort()
    async for _ in agen:
        pass


async def test_abort_during_manual_compaction_appends_nothing(make_session: MakeSession) -> None:
    import asyncio

    from pi_context.errors import CompactionCancelledError

    model = ScriptedModel([reply("answer " * 200), reply("two " * 200), reply("sum", delay=3600)])
    sess = await make_session(model, settings={"compaction": {"keepRecentTokens": 1}})
    await sess.run("question " * 200)
    await sess.run("more " * 200)
    before = len(sess.session.entries)
    ends: list[Any] = []
    sess.subscribe(lambda e: ends.append(e) if isinstance(e, CompactionEnd) else None)
    task = asyncio.create_task(sess.compact())
    while len(model.requests) < 3:
        await asyncio.sleep(0)
    assert sess.compacting
    sess.abort()
    with pytest.raises(CompactionCancelledError):
        await task
    assert len(sess.session.entries) == before
    assert ends[-1].aborted
    assert not sess.compacting


async def test_abort_during_branch_summary_keeps_the_leaf(make_session: MakeSession) -> None:
    import asyncio

    model = ScriptedModel([reply("A1"), reply("B1"), reply("summary", delay=3600)])
    sess = await make_session(model)
    await sess.run("first")
    await sess.run("second")
    leaf = sess.session.leaf_id
    first_assistant = next(e for e in sess.session.entries if e.role == "assistant")
    task = asyncio.create_task(sess.navigate(first_assistant.id, summarize=True))
    while len(model.requests) < 3:
        await asyncio.sleep(0)
    sess.abort()
    result = await task
    assert result.cancelled
    assert result.aborted
    assert sess.session.leaf_id == leaf


async def test_observation_masking_can_make_summarizing_unnecessary(
    make_session: MakeSession,
) -> None:
    import sys

    info = scripted_info(10_000, 1000)
    big = [("bash", {"command": f"{sys.executable} -c \"print('x' * 12000)\""})]
    model = ScriptedModel(
        [
            *(r for _ in range(3) for r in (reply(tool_calls=big), reply("ok"))),
        ],
        model_info=info,
    )
    settings = {
        "compaction": {
            "reserveTokens": 2000,
            "maskObservations": True,
            "maskKeepTurns": 1,
            "summarizer": "offline",
        }
    }
    sess = await make_session(model, settings=settings)
    events = []
    for n in range(3):
        events += await sess.run(f"produce output {n}")
    assert not [e for e in events if isinstance(e, CompactionStart)]
    edits = [e for e in sess.session.entries if e.type == "context_edit"]
    assert edits  # old tool results were masked instead
    last = model.requests[-1].messages
    masked = [
        m for m in last if m["role"] == "toolResult" and "x" * 100 not in text_of(m["content"])
    ]
    assert masked


async def test_pre_prompt_check_compacts_a_resumed_session(
    make_session: MakeSession, project_dir: Path
) -> None:
    from pi_context.agent.session import AgentSession
    from pi_context.messages import assistant_message, empty_usage, user_message
    from pi_context.session import Session

    path = project_dir.parent / "old.jsonl"
    old = Session.create(path, cwd=str(project_dir))
    usage = empty_usage()
    usage["input"], usage["totalTokens"] = 9500, 9500
    for n in range(3):
        old.append_message(user_message(f"old question {n} " * 100))
        old.append_message(
            assistant_message(
                [{"type": "text", "text": f"old answer {n} " * 100}],
                api="scripted",
                provider="scripted",
                model="scripted-model",
                usage=usage if n == 2 else None,
            )
        )
    old.close()
    info = scripted_info(10_000, 1000)
    model = ScriptedModel([reply("fresh")], model_info=info)
    sess = await AgentSession.open(
        path,
        model=model,
        agent_dir=project_dir.parent / "agent",
        trusted=True,
        settings={
            "compaction": {"reserveTokens": 2000, "keepRecentTokens": 1, "summarizer": "offline"}
        },
    )
    events = await sess.run("new question")
    kinds = [e.type for e in events]
    assert kinds.index("compaction_start") < kinds.index("agent_start")
    assert [e.type for e in sess.session.entries][-4:] == [
        "compaction",
        "message",
        "message",
        "message",
    ]
    sess.close()


async def test_an_overflow_after_a_successful_response_may_be_recovered_again(
    make_session: MakeSession,
) -> None:
    """The one-recovery limit counts from the last response that succeeded: a run that
    recovered, answered with a tool call, then overflowed again tries a second recovery
    (the failed attempt is omitted again) instead of reporting the recovery as failed."""
    model = ScriptedModel(
        [
            reply("first answer " * 200),
            failure(OVERFLOW, "context_overflow"),
            reply("reading " * 200, tool_calls=[("read", {"path": "missing.txt"})]),
            failure(OVERFLOW, "context_overflow"),
        ]
    )
    sess = await make_session(model, settings=OFFLINE)
    await sess.run("question one " * 200)
    events = await sess.run("question two")
    ends = [e for e in events if isinstance(e, CompactionEnd)]
    assert all(e.error_message is None for e in ends)
    assert types(sess).count("context_edit") == 2
    assert types(sess)[-1] == "context_edit"
    model.assert_complete()


async def test_the_offline_fallback_reaches_prompt_and_subscribers(
    make_session: MakeSession,
) -> None:
    model = ScriptedModel(
        [
            reply("first answer " * 200),
            failure(OVERFLOW, "context_overflow"),
            failure("bad request"),  # the summary request: rejected
            reply("recovered"),
        ]
    )
    auto = {"compaction": {"keepRecentTokens": 1, "summarizer": "auto"}}
    sess = await make_session(model, settings=auto)
    await sess.run("question one " * 200)
    heard: list[Any] = []
    sess.subscribe(heard.append)
    events = await sess.run("question two")
    fallbacks = [e for e in events if isinstance(e, CompactionFallback)]
    assert [e.error_message for e in fallbacks] == ["Summarization failed: bad request"]
    assert [e for e in heard if isinstance(e, CompactionFallback)] == fallbacks
    assert fallbacks[0].to_json() == {
        "type": "compaction_fallback",
        "errorMessage": "Summarization failed: bad request",
    }
    kinds = [e.type for e in events]
    assert kinds.index("compaction_start") < kinds.index("compaction_fallback")
    assert kinds.index("compaction_fallback") < kinds.index("compaction_end")


class _Clock:
    """A wall clock the test moves (Unix ms)."""

    def __init__(self) -> None:
        self.now = 1_700_000_000_000

    def __call__(self) -> int:
        return self.now


IDLE = {
    "compaction": {
        "reserveTokens": 2000,
        "keepRecentTokens": 1,
        "summarizer": "offline",
        "idleCompactPercent": 50,
    }
}


async def _after_pause(
    make_session: MakeSession, pause_s: int, context: int, settings: dict[str, Any] = IDLE
) -> list[str]:
    """Answer one prompt with ``context`` tokens used (window 10,000, threshold 8,000), pause
    ``pause_s`` seconds, send another: the engine's events of the second prompt."""
    clock = _Clock()
    model = ScriptedModel(
        [reply("first answer " * 100, input_tokens=context), reply("second")],
        model_info=scripted_info(10_000, 1000),
    )
    sess = await make_session(model, settings=settings, clock=clock)
    await sess.run("first question " * 100)
    clock.now += pause_s * 1000
    events = await sess.run("second question")
    return [e.type for e in events]


async def test_a_pause_past_the_cache_lifetime_compacts_a_half_full_context(
    make_session: MakeSession,
) -> None:
    kinds = await _after_pause(make_session, 301, 5000)
    assert kinds.index("compaction_start") < kinds.index("agent_start")


@pytest.mark.parametrize(
    ("pause_s", "context", "settings"),
    [
        (299, 5000, IDLE),  # the cache is still warm
        (301, 3000, IDLE),  # under half the threshold of 8,000
        (301, 5000, {"compaction": {**IDLE["compaction"], "idleCompactPercent": 0}}),
        (301, 5000, {"compaction": {**IDLE["compaction"], "idleSeconds": 600}}),
    ],
)
async def test_no_idle_compaction_otherwise(
    make_session: MakeSession, pause_s: int, context: int, settings: dict[str, Any]
) -> None:
    assert "compaction_start" not in await _after_pause(make_session, pause_s, context, settings)


async def test_masking_in_batches_waits_for_a_batch(make_session: MakeSession) -> None:
    import sys

    info = scripted_info(100_000, 1000)
    big = [("bash", {"command": f"{sys.executable} -c \"print('x' * 8000)\""})]
    model = ScriptedModel(
        [r for _ in range(4) for r in (reply(tool_calls=big), reply("ok"))], model_info=info
    )
    settings = {
        "compaction": {
            "maskObservations": True,
            "maskKeepTurns": 1,
            "maskBatchTokens": 3500,
            "summarizer": "offline",
        }
    }
    sess = await make_session(model, settings=settings)
    masked_after: list[int] = []
    for n in range(4):
        await sess.run(f"produce output {n}")
        masked_after.append(sum(e.type == "context_edit" for e in sess.session.entries))
    # ~2,000 tokens per result: one old result is not a batch, two are; far under the threshold
    assert masked_after == [0, 0, 2, 2]
    assert not any(e.type == "compaction" for e in sess.session.entries)
