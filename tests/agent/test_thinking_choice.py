"""Thinking levels in the agent: pi's startup, resume and model-switch rules, the entries they
write and the level each answer records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_context.agent._request import (
    recorded_thinking_level,
    startup_thinking_level,
    switch_thinking_level,
    thinking_budgets,
)
from pi_context.agent.session import AgentSession
from pi_context.model import ModelInfo
from pi_context.session import Session
from pi_context.testing import FixedClock, ScriptedModel, SequentialIds, reply

from .conftest import MakeSession

# a gpt-5-like model: no off, no xhigh/max
THINKER = ModelInfo(
    provider="acme",
    id="thinker",
    api="openai-completions",
    context_window=100_000,
    max_tokens=1000,
    reasoning=True,
    thinking_level_map={"off": None, "xhigh": None, "max": None},
)
PLAIN = ModelInfo(
    provider="acme", id="plain", api="openai-completions", context_window=100_000, max_tokens=1000
)


def test_new_session_level_flag_then_per_model_then_default_then_medium() -> None:
    per_model = {"modelThinkingLevels": {"acme/thinker": "high"}, "defaultThinkingLevel": "low"}
    assert startup_thinking_level(per_model, THINKER, requested="minimal") == "minimal"
    assert startup_thinking_level(per_model, THINKER) == "high"
    assert startup_thinking_level({"defaultThinkingLevel": "low"}, THINKER) == "low"
    assert startup_thinking_level({}, THINKER) == "medium"
    # clamped: off is not offered, so the nearest level above it
    assert startup_thinking_level({}, THINKER, requested="off") == "minimal"
    assert startup_thinking_level({}, THINKER, requested="max") == "high"
    assert startup_thinking_level({}, PLAIN, requested="high") == "off"
    assert startup_thinking_level({}, None, requested="high") == "off"


def test_resumed_session_keeps_its_recorded_level_unless_the_flag_says_otherwise() -> None:
    settings = {"modelThinkingLevels": {"acme/thinker": "high"}, "defaultThinkingLevel": "low"}
    assert startup_thinking_level(settings, THINKER, recorded="minimal", resumed=True) == "minimal"
    assert (
        startup_thinking_level(
            settings, THINKER, requested="medium", recorded="minimal", resumed=True
        )
        == "medium"
    )
    # nothing recorded: the default, not the per-model level
    assert startup_thinking_level(settings, THINKER, resumed=True) == "low"


def test_model_switch_level_scope_then_per_model_then_default_then_current() -> None:
    settings: dict[str, Any] = {"modelThinkingLevels": {"acme/thinker": "high"}}
    assert switch_thinking_level(settings, THINKER, current="low", scoped="minimal") == "minimal"
    assert switch_thinking_level(settings, THINKER, current="low") == "high"
    assert switch_thinking_level({"defaultThinkingLevel": "low"}, THINKER, current="high") == "low"
    assert switch_thinking_level({}, THINKER, current="off") == "minimal"  # clamped
    assert switch_thinking_level({}, PLAIN, current="high") == "off"


def test_thinking_budgets_keep_positive_integers_only() -> None:
    assert thinking_budgets({}) is None
    assert thinking_budgets({"thinkingBudgets": "lots"}) is None
    assert thinking_budgets(
        {"thinkingBudgets": {"low": 2048, "high": True, "medium": -1, "minimal": "x"}}
    ) == {"low": 2048}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_new_session_starts_with_model_and_level_entries_as_pi_writes_them(
    project_dir: Path,
) -> None:
    file = project_dir.parent / "s.jsonl"
    model = ScriptedModel([reply("hi")], model_info=THINKER)
    agent = await AgentSession.create(
        cwd=project_dir,
        model=model,
        session_file=file,
        agent_dir=project_dir.parent / "agent",
        trusted=True,
        ids=SequentialIds(),
        clock=FixedClock(),
    )
    assert agent.apply_startup_thinking_level("xhigh", resumed=False) == "high"
    await agent.run("hello")
    agent.close()
    raw = file.read_text(encoding="utf-8").splitlines()
    assert raw[1] == (
        '{"type":"model_change","id":"00000001","parentId":null,'
        '"timestamp":"2026-01-01T00:00:00.001Z","provider":"acme","modelId":"thinker"}'
    )
    assert raw[2] == (
        '{"type":"thinking_level_change","id":"00000002","parentId":"00000001",'
        '"timestamp":"2026-01-01T00:00:00.002Z","thinkingLevel":"high"}'
    )
    answer = next(
        e["message"] for e in _lines(file) if e.get("message", {}).get("role") == "assistant"
    )
    keys = list(answer)
    assert answer["thinkingLevel"] == "high"
    assert keys[keys.index("model") + 1] == "thinkingLevel"  # where pi puts it
    assert model.requests[0].options.thinking_level == "high"


async def test_answers_of_a_model_without_reasoning_record_off(make_session: MakeSession) -> None:
    agent = await make_session(ScriptedModel([reply("hi")], model_info=PLAIN))
    assert agent.apply_startup_thinking_level("high", resumed=False) == "off"
    await agent.run("hello")
    answer = agent.session.messages()[-1]
    assert answer.get("thinkingLevel") == "off"


async def test_set_level_writes_an_entry_only_when_the_level_changes(
    make_session: MakeSession,
) -> None:
    agent = await make_session(ScriptedModel([], model_info=THINKER))
    agent.apply_startup_thinking_level(None, resumed=False)
    before = len(agent.session.entries)
    assert agent.set_thinking_level("medium") == "medium"
    assert len(agent.session.entries) == before
    assert agent.set_thinking_level("off") == "minimal"
    assert recorded_thinking_level(agent.session.branch_view()) == "minimal"
    assert agent.thinking_level == "minimal"


async def test_resume_keeps_the_recorded_level_and_model_switch_applies_settings(
    project_dir: Path,
) -> None:
    agent_dir = project_dir.parent / "agent"
    (agent_dir / "settings.json").write_text(
        json.dumps({"modelThinkingLevels": {"acme/thinker": "low"}}), encoding="utf-8"
    )
    file = project_dir.parent / "r.jsonl"
    common: dict[str, Any] = {"agent_dir": agent_dir, "trusted": True, "ids": SequentialIds()}
    first = await AgentSession.create(
        cwd=project_dir,
        model=ScriptedModel([reply("a")], model_info=THINKER),
        session_file=file,
        **common,
    )
    assert first.apply_startup_thinking_level(None, resumed=False) == "low"
    first.set_thinking_level("high")
    await first.run("hello")
    first.close()

    again = await AgentSession.open(file, model=ScriptedModel([], model_info=THINKER), **common)
    count = len(again.session.entries)
    assert again.apply_startup_thinking_level(None, resumed=True) == "high"
    assert len(again.session.entries) == count  # unchanged: nothing written
    assert again.switch_model(ScriptedModel([], model_info=PLAIN)) == "off"
    assert again.switch_model(ScriptedModel([], model_info=THINKER)) == "low"
    kinds = [e.type for e in again.session.entries[count:]]
    assert kinds == [
        "model_change",
        "thinking_level_change",
        "model_change",
        "thinking_level_change",
    ]
    again.close()
    with Session.open(file) as reread:
        assert reread.projection().thinking_level == "low"


async def test_settings_thinking_budgets_reach_the_request_options(
    make_session: MakeSession, project_dir: Path
) -> None:
    (project_dir.parent / "agent" / "settings.json").write_text(
        json.dumps({"thinkingBudgets": {"low": 1500, "high": 9000}}), encoding="utf-8"
    )
    model = ScriptedModel([reply("ok")], model_info=THINKER)
    agent = await make_session(model)
    agent.apply_startup_thinking_level("low", resumed=False)
    await agent.run("hello")
    options = model.requests[0].options
    assert options.thinking_level == "low"
    assert options.thinking_budgets == {"low": 1500, "high": 9000}
