"""The compaction engine against a scripted model: success, failures, retries, hooks, guard."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pi_context.compaction import (
    CancelCompaction,
    CompactionEnd,
    CompactionFailed,
    CompactionFallback,
    CompactionPaused,
    CompactionSettings,
    CompactionStart,
    Compactor,
    CustomCompaction,
    SessionCompact,
    SummarizationRetryScheduled,
    compact,
)
from pi_context.compaction.prompts import SPLIT_TURN_SEPARATOR, SUMMARY_SYSTEM_PROMPT
from pi_context.errors import CompactionCancelledError, CompactionError
from pi_context.resources.settings import RetrySettings
from pi_context.session import Session
from pi_context.testing import ScriptedModel, failure, reply
from pi_context.tokens import estimate_tokens
from tests.compaction.helpers import add_turn, build_session, last_turn_tokens, orphan_tool_results
from tests.helpers import no_sleep
from tests.jsonview import as_json

# build_session turns are 527 tokens each: keeping 527 cuts exactly at the last turn's start
TURN = 527
SMALL_KEEP = CompactionSettings(keep_recent_tokens=TURN, summarizer="model")


def _paused(compactor: Compactor) -> bool:
    """Read through a call, so mypy does not keep the narrowing of an earlier assert."""
    return compactor.paused


def recorder() -> tuple[list[Any], Any]:
    events: list[Any] = []
    return events, events.append


async def test_successful_compaction_appends_entry_with_pi_fields() -> None:
    session = build_session(6)
    assert last_turn_tokens(session) == TURN
    model = ScriptedModel([reply("## Goal\nFix things", input_tokens=900, output_tokens=100)])
    events, on_event = recorder()
    before = len(session.entries)
    result = await compact(session, model, SMALL_KEEP, on_event=on_event)
    assert result is not None
    assert len(session.entries) == before + 1
    entry = session.entries[-1]
    assert entry.type == "compaction"
    data = entry.data
    assert data["summary"].startswith("## Goal\nFix things\n\n<read-files>\n")
    assert "src/file0.py" in data["details"]["readFiles"]
    assert data["fromHook"] is False
    assert data["usage"]["totalTokens"] == 1000
    assert data["firstKeptEntryId"] == result.first_kept_entry_id
    assert data["tokensBefore"] == result.tokens_before
    assert result.estimated_tokens_after is not None
    assert result.tokens_before is not None
    assert result.estimated_tokens_after < result.tokens_before
    # pi: the estimate of every message of the new projection
    assert result.estimated_tokens_after == sum(
        estimate_tokens(m) for m in session.projection().messages
    )
    # one request, no tools, never writes the prompt cache, our system prompt
    (request,) = model.requests
    assert request.tools == ()
    assert request.options.cache == "none"
    assert request.options.session_id is not None  # a fresh routing id, not the session's
    assert request.system_prompt == SUMMARY_SYSTEM_PROMPT
    prompt = as_json(request.messages[0])["content"][0]["text"]
    assert prompt.startswith("<conversation>\n[User]: Request 0")
    assert "<previous-summary>" not in prompt
    kinds = [type(e) for e in events]
    assert kinds == [CompactionStart, SessionCompact, CompactionEnd]
    assert events[-1].result is result
    assert orphan_tool_results(session.projection().messages) == []


async def test_second_compaction_updates_previous_summary() -> None:
    session = build_session(6)
    model = ScriptedModel([reply("first summary"), reply("second summary")])
    first = await compact(session, model, SMALL_KEEP)
    assert first is not None
    for n in range(6, 10):
        add_turn(session, n)
    second = await compact(session, model, SMALL_KEEP)
    assert second is not None
    prompt = as_json(model.requests[1].messages[0])["content"][0]["text"]
    assert "<previous-summary>\n" + first.summary + "\n</previous-summary>" in prompt
    # file lists carry over from the previous compaction
    assert "src/file0.py" in second.details["readFiles"]
    # the messages the first compaction kept are summarized now
    assert f"Request {5}" in prompt


async def test_split_turn_makes_two_sequential_requests_and_sums_usage() -> None:
    session = build_session(2)
    session.append_message({"role": "user", "content": "Big task", "timestamp": 1})
    from tests.compaction.helpers import assistant_with_usage

    for n in range(4):
        session.append_message(
            assistant_with_usage(None, [(f"c{n}", "read", {"path": f"b{n}.py"})])
        )
        session.append_message(
            {
                "role": "toolResult",
                "toolCallId": f"c{n}",
                "toolName": "read",
                "content": [{"type": "text", "text": "y" * 4000}],
                "isError": False,
                "timestamp": 1,
            }
        )
    model = ScriptedModel(
        [
            reply("history", input_tokens=10, output_tokens=1),
            reply("prefix", input_tokens=5, output_tokens=2),
        ]
    )
    result = await compact(session, model, SMALL_KEEP, custom_instructions="  the parser  ")
    assert result is not None
    assert result.summary.startswith("history" + SPLIT_TURN_SEPARATOR + "prefix")
    assert result.usage is not None
    assert result.usage["input"] == 15
    assert result.usage["output"] == 3
    first, second = (as_json(r.messages[0])["content"][0]["text"] for r in model.requests)
    assert first.endswith("Additional focus: the parser")
    assert second.startswith("# Conversation\n[User]: Big task")
    assert second.endswith("Additional focus: the parser")


@pytest.mark.parametrize(
    ("scripted", "message"),
    [
        (failure("invalid api key", "authentication"), "Summarization failed: invalid api key"),
        (reply("partial", stop_reason="length"), "token cap"),
        (reply(tool_calls=[("read", {"path": "x"})]), "Summarization attempted to call a tool"),
    ],
)
async def test_failures_append_nothing_and_emit_failure_events(scripted: Any, message: str) -> None:
    session = build_session(6)
    before = [e.raw for e in session.entries]
    context_before = session.projection().messages
    events, on_event = recorder()
    with pytest.raises(CompactionError, match=message):
        await compact(session, ScriptedModel([scripted]), SMALL_KEEP, on_event=on_event)
    assert [e.raw for e in session.entries] == before
    assert session.projection().messages == context_before
    end, failed = events[-2:]
    assert isinstance(end, CompactionEnd)
    assert end.result is None
    assert end.will_retry is False
    assert end.error_message is not None
    assert end.error_message.startswith("Compaction failed: ")
    assert isinstance(failed, CompactionFailed)
    assert failed.aborted is False


async def test_automatic_failure_returns_none_without_raising() -> None:
    session = build_session(6)
    compactor = Compactor(session, ScriptedModel([failure("boom")]), SMALL_KEEP)
    assert await compactor.compact(reason="threshold") is None
    assert compactor.failures == 1


async def test_transient_errors_are_retried_with_backoff() -> None:
    session = build_session(6)
    model = ScriptedModel(
        [failure("overloaded", "transient"), failure("503 service unavailable"), reply("ok")]
    )
    delays: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        delays.append(seconds)

    events, on_event = recorder()
    result = await compact(
        session,
        model,
        SMALL_KEEP,
        retry=RetrySettings(base_delay_ms=100),
        on_event=on_event,
        sleep=fake_sleep,
    )
    assert result is not None
    assert delays == [0.1, 0.2]
    scheduled = [e for e in events if isinstance(e, SummarizationRetryScheduled)]
    assert [(e.attempt, e.max_attempts) for e in scheduled] == [(1, 3), (2, 3)]


async def test_retries_give_up_after_max_retries() -> None:
    session = build_session(6)
    model = ScriptedModel([failure("overloaded", "transient")] * 3)
    with pytest.raises(CompactionError, match="overloaded"):
        await compact(
            session, model, SMALL_KEEP, retry=RetrySettings(max_retries=2), sleep=no_sleep
        )
    model.assert_complete()


async def test_cancellation_stops_at_once_and_appends_nothing() -> None:
    session = build_session(6)
    before = len(session.entries)
    model = ScriptedModel([reply("slow", delay=30)])
    events, on_event = recorder()
    task = asyncio.create_task(compact(session, model, SMALL_KEEP, on_event=on_event))
    while not model.requests:
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(session.entries) == before
    assert isinstance(events[-1], CompactionFailed)
    assert events[-1].aborted


async def test_hook_can_cancel_or_supply_the_compaction() -> None:
    session = build_session(6)
    with pytest.raises(CompactionCancelledError):
        await compact(session, None, SMALL_KEEP, before_compact=lambda _e: CancelCompaction())

    async def custom(event: Any) -> CustomCompaction:
        prep = event.preparation
        return CustomCompaction("extension summary", prep.first_kept_entry_id, prep.tokens_before)

    model = ScriptedModel([])
    result = await compact(session, model, SMALL_KEEP, before_compact=custom)
    assert result is not None
    assert result.from_extension
    entry = session.entries[-1]
    assert entry.data["summary"] == "extension summary"  # stored verbatim, no file lists
    assert entry.data["fromHook"] is True
    assert model.requests == []


async def test_no_model_uses_offline_summarizer_by_default() -> None:
    session = build_session(6)
    result = await compact(session, None, CompactionSettings(keep_recent_tokens=TURN))
    assert result is not None
    assert result.offline
    assert "## Goal" in result.summary
    assert "Request 0: please look at file0.py" in result.summary
    assert "usage" not in session.entries[-1].data


async def test_model_failure_falls_back_to_offline_in_auto_mode() -> None:
    session = build_session(6)
    events, on_event = recorder()
    settings = CompactionSettings(keep_recent_tokens=TURN, summarizer="auto")
    result = await compact(
        session, ScriptedModel([failure("bad request")]), settings, on_event=on_event
    )
    assert result is not None
    assert result.offline
    assert result.fallback_error == "Summarization failed: bad request"
    assert any(isinstance(e, CompactionFallback) for e in events)


async def test_guard_rejects_a_summary_that_does_not_shrink_the_context() -> None:
    session = build_session(6)
    huge = "z" * 200_000
    with pytest.raises(CompactionError, match="would not shrink"):
        await compact(session, ScriptedModel([reply(huge)]), SMALL_KEEP)
    assert session.entries[-1].type == "message"


async def test_repeated_failures_pause_automatic_compaction_until_the_user_acts() -> None:
    session = build_session(6)
    settings = CompactionSettings(
        keep_recent_tokens=TURN, summarizer="model", max_consecutive_failures=2
    )
    events, on_event = recorder()
    model = ScriptedModel([failure("boom"), failure("boom"), reply("fine")])
    compactor = Compactor(session, model, settings, on_event=on_event)
    assert await compactor.compact(reason="threshold") is None
    assert not _paused(compactor)
    assert await compactor.compact(reason="threshold") is None
    assert _paused(compactor)
    assert any(isinstance(e, CompactionPaused) for e in events)
    assert await compactor.maybe_compact(1000) is None  # paused: no request made
    assert len(model.requests) == 2
    result = await compactor.compact()  # manual: the user acted
    assert result is not None
    assert not compactor.paused


async def test_nothing_to_compact_is_silent_for_automatic_and_an_error_for_manual() -> None:
    session = build_session(1)
    events, on_event = recorder()
    compactor = Compactor(session, None, CompactionSettings(), on_event=on_event)
    assert await compactor.compact(reason="threshold") is None
    assert events == []
    with pytest.raises(CompactionError, match="Nothing to compact"):
        await compactor.compact()


async def test_already_compacted_is_refused() -> None:
    session = build_session(6)
    await compact(session, None, CompactionSettings(keep_recent_tokens=TURN))
    with pytest.raises(CompactionError, match="Already compacted"):
        await compact(session, None, CompactionSettings(keep_recent_tokens=TURN))


async def test_compaction_persists_and_reloads(tmp_path: Any) -> None:
    path = tmp_path / "s.jsonl"
    session = build_session(6, path)
    result = await compact(session, None, CompactionSettings(keep_recent_tokens=TURN))
    assert result is not None
    session.close()
    reloaded = Session.open(path)
    assert reloaded.entries[-1].data["summary"] == result.summary
    messages = reloaded.projection().messages
    assert messages[0]["role"] == "compactionSummary"
    assert orphan_tool_results(messages) == []
    reloaded.close()


async def test_entry_stores_the_system_prompt_snapshot_at_the_boundary() -> None:
    from tests.compaction.helpers import new_session

    session = new_session()
    session.append_message(
        {
            "role": "system",
            "content": "",
            "sections": {"preamble": "You help.", "cwd": "<cwd>\n/w\n</cwd>"},
            "timestamp": 5,
        }
    )
    for n in range(6):
        add_turn(session, n)
    session.append_message(
        {"role": "system", "content": "", "sections": {"cwd": "<cwd>\n/x\n</cwd>"}, "timestamp": 6}
    )
    add_turn(session, 6)
    compactor = Compactor(
        session, None, CompactionSettings(keep_recent_tokens=TURN), clock=lambda: 777
    )
    result = await compactor.compact()
    assert result is not None
    snapshot = session.entries[-1].data["systemMessage"]
    assert snapshot["role"] == "system"
    assert snapshot["sections"] == {"preamble": "You help.", "cwd": "<cwd>\n/x\n</cwd>"}
    assert snapshot["timestamp"] == 777
    messages = session.projection().messages
    assert [m["role"] for m in messages[:2]] == ["system", "compactionSummary"]
    assert all(m["role"] != "system" for m in messages[2:])
    assert result.estimated_tokens_after == sum(estimate_tokens(m) for m in messages)


async def test_quota_errors_are_never_retried() -> None:
    session = build_session(6)
    model = ScriptedModel([failure("insufficient_quota: check your billing", "transient")])
    with pytest.raises(CompactionError, match="insufficient_quota"):
        await compact(session, model, SMALL_KEEP, sleep=no_sleep)
    assert len(model.requests) == 1
