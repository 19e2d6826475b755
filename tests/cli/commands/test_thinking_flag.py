"""``--thinking`` and the Shift+Tab cycle key, end to end: the level reaches the wire (a
127.0.0.1 replay server) clamped to the model, and the session records it as pi does."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cli.replay_world import HANG_GUARD, PICTX, ReplayWorld, text_reply


def _kinds(entries: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in entries[1:]]


def test_thinking_flag_reaches_the_wire_clamped_and_is_recorded(replay_world: ReplayWorld) -> None:
    replay_world.server.add(text_reply("Thought."))
    done = replay_world.run("-p", "--model", "replay/thinker", "--thinking", "xhigh", "think")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Thought."
    sent = replay_world.server.requests[0].json()
    assert sent["reasoning_effort"] == "high"  # xhigh is not offered: the nearest below
    entries = replay_world.entries()
    assert _kinds(entries)[:2] == ["model_change", "thinking_level_change"]
    assert entries[1]["provider"] == "replay"
    assert entries[1]["modelId"] == "thinker"
    assert list(entries[2]) == ["type", "id", "parentId", "timestamp", "thinkingLevel"]
    assert entries[2]["thinkingLevel"] == "high"
    answer = entries[-1]["message"]
    assert answer["role"] == "assistant"
    assert answer["thinkingLevel"] == "high"


def test_settings_decide_the_level_without_the_flag_and_a_bad_flag_is_ignored(
    replay_world: ReplayWorld,
) -> None:
    replay_world.write_settings({"modelThinkingLevels": {"replay/thinker": "low"}})
    replay_world.server.add(text_reply("One."), text_reply("Two."))
    done = replay_world.run("-p", "--model", "replay/thinker", "--thinking", "huge", "go")
    assert done.returncode == 0
    assert done.stderr.splitlines()[0] == (
        'Warning: Invalid thinking level "huge". '
        "Valid values: off, minimal, low, medium, high, xhigh, max"
    )
    assert replay_world.server.requests[0].json()["reasoning_effort"] == "low"
    # resumed: the recorded level holds although the settings changed
    replay_world.write_settings({"defaultThinkingLevel": "high"})
    again = replay_world.run("-p", "-c", "--model", "replay/thinker", "more")
    assert again.returncode == 0, again.stderr
    assert replay_world.server.requests[1].json()["reasoning_effort"] == "low"
    assert _kinds(replay_world.entries()).count("thinking_level_change") == 1


def test_a_model_without_reasoning_gets_off_and_no_reasoning_field(
    replay_world: ReplayWorld,
) -> None:
    replay_world.server.add(text_reply("Plain."))
    done = replay_world.run("-p", "--model", "replay/tiny", "--thinking", "high", "hi")
    assert done.returncode == 0, done.stderr
    assert "reasoning_effort" not in replay_world.server.requests[0].json()
    assert replay_world.entries()[2]["thinkingLevel"] == "off"


def test_shift_tab_cycles_the_level_in_the_status_line(replay_world: ReplayWorld) -> None:
    pexpect = pytest.importorskip("pexpect")
    replay_world.server.add(text_reply("Cycled."))
    child = pexpect.spawn(
        PICTX[0],
        [*PICTX[1:], "--model", "replay/thinker", "--thinking", "low"],
        cwd=str(replay_world.project),
        env={**replay_world.env, "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1"},
        encoding="utf-8",
        dimensions=(40, 120),
        timeout=HANG_GUARD,
    )
    try:
        child.expect_exact("thinking low")
        child.expect_exact("›")
        child.send("\x1b[Z")  # Shift+Tab
        child.expect_exact("Thinking level: medium")
        child.send("\x1b[Z")
        child.expect_exact("Thinking level: high")
        child.send("hello\r")
        child.expect_exact("Cycled.")
        child.expect_exact("›")
        child.send("/quit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert replay_world.server.requests[0].json()["reasoning_effort"] == "high"
    levels = [
        e["thinkingLevel"] for e in replay_world.entries() if e["type"] == "thinking_level_change"
    ]
    assert levels == ["low", "medium", "high"]


def test_ctrl_p_cycles_the_models_scope_with_its_levels(replay_world: ReplayWorld) -> None:
    pexpect = pytest.importorskip("pexpect")
    replay_world.server.add(text_reply("From thinker."))
    child = pexpect.spawn(
        PICTX[0],
        [*PICTX[1:], "--models", "replay/tiny,replay/thinker:high"],
        cwd=str(replay_world.project),
        env={**replay_world.env, "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1"},
        encoding="utf-8",
        dimensions=(40, 120),
        timeout=HANG_GUARD,
    )
    try:
        child.expect_exact("replay/tiny")  # a new session starts on the scope's first model
        child.expect_exact("›")
        child.send("\x10")  # Ctrl+P
        child.expect_exact("Switched to thinker (thinking: high)")
        child.send("\x10")
        child.expect_exact("Switched to tiny")
        child.send("\x10")
        child.expect_exact("Switched to thinker (thinking: high)")
        child.send("hello\r")
        child.expect_exact("From thinker.")
        child.expect_exact("›")
        child.send("/quit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    sent = replay_world.server.requests[0].json()
    assert sent["model"] == "thinker"
    assert sent["reasoning_effort"] == "high"
    models = [e["modelId"] for e in replay_world.entries() if e["type"] == "model_change"]
    assert models == ["tiny", "thinker", "tiny", "thinker"]


def test_a_new_session_starts_on_the_saved_default_when_the_scope_holds_it(
    replay_world: ReplayWorld,
) -> None:
    replay_world.write_settings({"defaultProvider": "replay", "defaultModel": "thinker"})
    replay_world.server.add(text_reply("From the default."))
    done = replay_world.run("-p", "--models", "replay/tiny,replay/thinker:high", "hello")
    assert done.returncode == 0, done.stderr
    sent = replay_world.server.requests[0].json()
    assert sent["model"] == "thinker"
    assert sent["reasoning_effort"] == "high"  # the scope entry's level comes with it


def test_a_new_session_starts_on_the_scopes_first_model_without_a_saved_default_in_it(
    replay_world: ReplayWorld,
) -> None:
    replay_world.write_settings({"defaultProvider": "replay", "defaultModel": "elsewhere"})
    replay_world.server.add(text_reply("From the first."))
    done = replay_world.run("-p", "--models", "replay/thinker:high,replay/tiny", "hello")
    assert done.returncode == 0, done.stderr
    assert replay_world.server.requests[0].json()["model"] == "thinker"
