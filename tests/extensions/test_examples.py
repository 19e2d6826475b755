"""The two example extensions shipped under examples/extensions/."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, cast

import pytest

from pi_context.compaction.events import BeforeCompact
from pi_context.extensions import load_extensions
from pi_context.extensions.events import BeforeAgentStartEvent
from pi_context.extensions.loader import load_extension_module
from pi_context.messages import (
    assistant_message,
    text_block,
    text_of,
    tool_call,
    tool_result_message,
    user_message,
)
from pi_context.testing import ScriptedModel, failure, reply

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"


@pytest.fixture(scope="module")
def compaction_example() -> ModuleType:
    return load_extension_module(EXAMPLES / "custom_compaction.py")


@pytest.fixture(scope="module")
def section_example() -> ModuleType:
    return load_extension_module(EXAMPLES / "inject_section.py")


def preparation() -> SimpleNamespace:
    return SimpleNamespace(
        first_kept_entry_id="keep0001",
        tokens_before=12345,
        previous_summary="Earlier: set up the repo.",
        messages_to_summarize=[
            user_message("Fix the failing test in calc.py", timestamp=1),
            assistant_message(
                [text_block("Looking."), tool_call("c1", "read", {"path": "calc.py"})],
                api="a",
                provider="p",
                model="m",
                timestamp=2,
            ),
            tool_result_message(
                "c1", "read", [text_block("def add(a, b): return a - b")], timestamp=3
            ),
        ],
        turn_prefix_messages=[],
    )


def compact_event() -> BeforeCompact:
    return BeforeCompact(
        preparation=cast(Any, preparation()),
        branch_entries=[],
        reason="threshold",
        custom_instructions="the bug",
    )


async def test_custom_compaction_uses_the_other_model(compaction_example: ModuleType) -> None:
    model = ScriptedModel(
        [reply("## Notes\nadd() subtracts; fix it.", input_tokens=50, output_tokens=9)]
    )
    runner = load_extensions(
        cwd=".",
        include_discovered=False,
        registrations=[("summaries", compaction_example.make_extension(model))],
    )
    result = await runner.emit_session_before_compact(compact_event())
    model.assert_complete()
    assert result is not None
    draft = result.compaction
    assert draft is not None
    assert draft.summary == "## Notes\nadd() subtracts; fix it."
    assert draft.first_kept_entry_id == "keep0001"
    assert draft.tokens_before == 12345
    assert draft.usage is not None
    assert draft.usage["input"] == 50
    assert draft.details == {"summarizer": "scripted/scripted-model"}
    request = model.requests[0]
    assert request.options.cache == "none"
    assert request.system_prompt == compaction_example.SYSTEM_PROMPT
    prompt = text_of(request.messages[0]["content"])
    assert "Earlier: set up the repo." in prompt
    assert "User: Fix the failing test in calc.py" in prompt
    assert "Result of read: def add(a, b): return a - b" in prompt
    assert "focus on: the bug" in prompt


async def test_custom_compaction_falls_back_when_its_model_fails(
    compaction_example: ModuleType,
) -> None:
    model = ScriptedModel([failure("rate limited", "transient", status=429)])
    runner = load_extensions(
        cwd=".",
        include_discovered=False,
        registrations=[("summaries", compaction_example.make_extension(model))],
    )
    assert await runner.emit_session_before_compact(compact_event()) is None
    assert runner.failures == []


def test_custom_compaction_unconfigured_registers_nothing(
    compaction_example: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PI_COMPACTION_MODEL", raising=False)
    runner = load_extensions(
        cwd=".", include_discovered=False, paths=[EXAMPLES / "custom_compaction.py"]
    )
    assert runner.load_errors == []
    assert not runner.has_handlers("session_before_compact")


def test_custom_compaction_configured_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_COMPACTION_MODEL", "small")
    monkeypatch.setenv("PI_COMPACTION_BASE_URL", "http://127.0.0.1:9/v1")
    runner = load_extensions(
        cwd=".", include_discovered=False, paths=[EXAMPLES / "custom_compaction.py"]
    )
    assert runner.load_errors == []
    assert runner.has_handlers("session_before_compact")


def section_event() -> tuple[BeforeAgentStartEvent, dict[str, Any]]:
    options: dict[str, Any] = {"sections": {"work_in_progress": "stale"}}
    return BeforeAgentStartEvent("user", options, prompt="go"), options


async def test_inject_section_adds_the_section(
    section_example: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(
        section_example, "changed_files", lambda cwd: [" M src/app.py", "?? notes.md"]
    )
    runner = load_extensions(
        cwd=tmp_path, include_discovered=False, registrations=[("wip", section_example.register)]
    )
    event, options = section_event()
    await runner.emit_before_agent_start(event)
    assert options["sections"]["work_in_progress"] == (
        "Uncommitted changes in this work tree (git status --porcelain):\n M src/app.py\n?? notes.md"
    )


async def test_inject_section_drops_it_outside_git(
    section_example: ModuleType, tmp_path: Path
) -> None:
    runner = load_extensions(
        cwd=tmp_path, include_discovered=False, registrations=[("wip", section_example.register)]
    )
    event, options = section_event()
    await runner.emit_before_agent_start(event)
    assert runner.failures == []
    assert options["sections"] == {}


def test_section_text_caps_the_list(section_example: ModuleType) -> None:
    text = section_example.section_text([f" M f{i}" for i in range(40)])
    assert text.endswith("\n... and 10 more")
    assert section_example.section_text([]) is None
