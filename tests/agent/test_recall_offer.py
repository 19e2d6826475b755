"""The agent offers ``recall`` once the branch holds a compaction, through a prompt patch."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from pi_context.messages import text_of
from pi_context.testing import FixedClock, ScriptedModel, reply

from .conftest import MakeSession

OFFLINE = {"compaction": {"keepRecentTokens": 1, "summarizer": "offline"}}


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _tool_names(model: ScriptedModel, index: int) -> list[str]:
    return [t["name"] for t in model.requests[index].tools]


async def test_a_session_without_compaction_sends_what_it_would_without_recall(
    make_session: MakeSession,
) -> None:
    auto = ScriptedModel([reply("hi")])
    off = ScriptedModel([reply("hi")])
    await (await make_session(auto, recall="auto", clock=FixedClock(), session_id="s1")).run(
        "hello"
    )
    await (await make_session(off, recall="off", clock=FixedClock(), session_id="s1")).run("hello")
    assert _tool_names(auto, 0) == ["read", "bash", "edit", "write"]
    assert auto.requests[0].tools == off.requests[0].tools
    assert auto.requests[0].messages == off.requests[0].messages


async def test_after_a_compaction_recall_is_patched_in_and_returns_the_original(
    make_session: MakeSession,
) -> None:
    model = ScriptedModel(
        [
            reply("noted " * 200),
            reply("more " * 200),
            reply(tool_calls=[("recall", {"query": "walrus 4417"})]),
            reply("The walrus code was 4417."),
        ]
    )
    sess = await make_session(model, settings={**OFFLINE, "recall": "auto"})
    await sess.run("Remember: the walrus code is 4417. " + "filler " * 200)
    await sess.run("next " * 200)
    await sess.compact()
    await sess.run("What was the walrus code?")
    assert "recall" not in _tool_names(model, 1)
    assert _tool_names(model, 2)[-1] == "recall"
    system = model.requests[2].messages[0]
    assert system["role"] == "system"
    # the patch that declares the tool is stored in the session (cache-friendly replay)
    patches = [
        e.message
        for e in sess.session.branch_view()
        if e.type == "message" and e.role == "system" and e.message is not None
    ]
    added = [t["name"] for p in patches for t in cast(list[Any], p.get("toolsAdded") or [])]
    assert "recall" in added
    result = model.requests[3].messages[-1]
    assert result["role"] == "toolResult"
    text = text_of(result["content"])
    assert "Remember: the walrus code is 4417." in text
    assert "summarized by compaction" in text


async def test_always_offers_recall_from_the_start(make_session: MakeSession) -> None:
    model = ScriptedModel([reply("hi")])
    await (await make_session(model, recall="always")).run("hello")
    assert _tool_names(model, 0) == ["read", "bash", "edit", "write", "recall"]


async def test_off_by_default_and_the_option_wins_over_the_setting(
    make_session: MakeSession,
) -> None:
    model = ScriptedModel([reply("a " * 200), reply("b " * 200), reply("c")])
    sess = await make_session(model, settings={**OFFLINE, "recall": "auto"}, recall="off")
    await sess.run("one " * 200)
    await sess.run("two " * 200)
    await sess.compact()
    await sess.run("three")
    assert "recall" not in _tool_names(model, 2)


async def test_default_is_auto(make_session: MakeSession) -> None:
    model = ScriptedModel([reply("a " * 200), reply("b " * 200), reply("c")])
    sess = await make_session(model, settings=OFFLINE)
    await sess.run("one " * 200)
    await sess.run("two " * 200)
    assert "recall" not in _tool_names(model, 1)
    await sess.compact()
    await sess.run("three")
    assert "recall" in _tool_names(model, 2)
