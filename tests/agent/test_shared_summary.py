"""``compaction.shareCache``: the summary request continues the conversation's own request."""

from __future__ import annotations

from typing import Any

from pi_context.compaction.prompts import SHARED_SUMMARY_HEADING, SUMMARY_SYSTEM_PROMPT
from pi_context.messages import text_of
from pi_context.model import ModelInfo
from pi_context.testing import ScriptedModel, reply

from .conftest import MakeSession

SHARED = {"compaction": {"keepRecentTokens": 1, "summarizer": "model", "shareCache": True}}


def _compaction(sess: Any) -> Any:
    return next(e for e in reversed(sess.session.entries) if e.type == "compaction")


async def test_manual_compaction_sends_the_conversation_then_the_instructions(
    make_session: MakeSession,
) -> None:
    model = ScriptedModel(
        [
            reply(tool_calls=[("read", {"path": "notes.txt"})]),
            reply("read it " * 100),
            reply("second answer " * 100),
            reply("## Goal\nThe summary."),
        ]
    )
    sess = await make_session(model, settings=SHARED)
    await sess.run("look at notes.txt " * 50)
    await sess.run("and again " * 50)
    last_turn = model.requests[2]
    await sess.compact()
    summary_request = model.requests[3]
    # the same tools and options, the previous request's messages as a prefix
    assert summary_request.tools == last_turn.tools
    assert summary_request.options == last_turn.options
    assert summary_request.options.cache != "none"
    assert summary_request.system_prompt is None
    prefix = list(summary_request.messages[: len(last_turn.messages)])
    assert prefix == list(last_turn.messages)
    # then the answer to that request and the instructions as the last user message
    assert len(summary_request.messages) == len(last_turn.messages) + 2
    last = summary_request.messages[-1]
    assert last["role"] == "user"
    assert text_of(last["content"]).startswith(SHARED_SUMMARY_HEADING)
    entry = _compaction(sess)
    assert entry.get("summary").startswith("## Goal\nThe summary.")
    assert "notes.txt" in entry.get("details")["readFiles"]
    assert "<read-files>" in entry.get("summary")
    model.assert_complete()


async def test_a_tool_call_in_the_shared_reply_falls_back_to_a_standalone_request(
    make_session: MakeSession,
) -> None:
    model = ScriptedModel(
        [
            reply("first answer " * 100),
            reply("second answer " * 100),
            reply(tool_calls=[("bash", {"command": "ls"})]),
            reply("## Goal\nStandalone summary."),
            reply("## Original Request\nThe turn prefix."),
        ]
    )
    sess = await make_session(model, settings=SHARED)
    await sess.run("question one " * 50)
    await sess.run("question two " * 50)
    await sess.compact()
    standalone = model.requests[3]
    assert standalone.tools == ()
    assert standalone.system_prompt == SUMMARY_SYSTEM_PROMPT
    assert text_of(standalone.messages[0]["content"]).startswith("<conversation>")
    assert _compaction(sess).get("summary").startswith("## Goal\nStandalone summary.")
    model.assert_complete()


async def test_overflow_recovery_never_sends_the_whole_conversation_again(
    make_session: MakeSession,
) -> None:
    from pi_context.testing import failure

    info = ModelInfo(
        provider="scripted",
        id="scripted-model",
        api="scripted",
        context_window=128_000,
        max_tokens=16_384,
    )
    model = ScriptedModel(
        [
            reply("first answer " * 200),
            failure("prompt is too long: 200000 tokens > 128000 maximum", "context_overflow"),
            reply("## Goal\nRecovered summary."),
            reply("## Original Request\nThe turn prefix."),
            reply("recovered"),
        ],
        model_info=info,
    )
    sess = await make_session(model, settings=SHARED)
    await sess.run("question one " * 200)
    await sess.run("question two")
    for summary_request in model.requests[2:4]:
        assert summary_request.tools == ()
        assert summary_request.system_prompt == SUMMARY_SYSTEM_PROMPT
    model.assert_complete()
