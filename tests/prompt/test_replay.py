from __future__ import annotations

from typing import Any

from pi_context.prompt import (
    apply_forced_prompt,
    collapse_system_messages,
    get_current_system_message,
    get_current_tools,
    replay_system_state,
    system_message_for_update,
)
from pi_context.prompt.replay import (
    declare_tool_changes,
    diff_sections,
    render_system_message_update,
)

READ = {"name": "read", "description": "r", "parameters": {"type": "object"}}
BASH = {"name": "bash", "description": "b", "parameters": {"type": "object"}}


def sysmsg(sections: dict[str, Any] | None = None, ts: int = 1, **kw: Any) -> dict[str, Any]:
    m: dict[str, Any] = {"role": "system", "content": ""}
    if sections is not None:
        m["sections"] = sections
    m["timestamp"] = ts
    m.update(kw)
    return m


USER = {"role": "user", "content": "hi", "timestamp": 5}


def test_diff_orders_changes_then_deletions() -> None:
    assert diff_sections({"a": "1", "b": "2"}, {"b": "2", "a": "1"}) is None
    patch = diff_sections({"a": "1", "gone": "x", "b": "2"}, {"new": "n", "b": "3", "a": "1"})
    assert patch == {"new": "n", "b": "3", "gone": None}
    assert list(patch or {}) == ["new", "b", "gone"]


def test_replay_keeps_updated_position_and_moves_readded_to_end() -> None:
    msgs = [
        sysmsg({"a": "A", "b": "B", "c": "C"}, ts=10),
        USER,
        sysmsg({"b": "B2"}, ts=11),
        sysmsg({"a": None}, ts=12),
        sysmsg({"a": "A3"}, ts=13),
    ]
    state = replay_system_state(msgs)
    assert list(state.sections.items()) == [("b", "B2"), ("c", "C"), ("a", "A3")]
    assert state.timestamp == 10
    assert state.text == "B2\n\nC\n\nA3"


def test_later_content_is_appended() -> None:
    msgs = [
        {"role": "system", "content": "base", "timestamp": 1},
        {
            "role": "system",
            "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}],
            "timestamp": 2,
        },
    ]
    current = get_current_system_message(msgs)
    assert current is not None
    assert current["content"] == "base\n\nx\ny"


def test_tools_removed_then_added_move_to_end() -> None:
    msgs = [
        sysmsg({}, toolsAdded=[READ, BASH]),
        sysmsg(None, toolsRemoved=[{"name": "read"}], toolsAdded=[{**READ, "description": "r2"}]),
    ]
    tools = get_current_tools(msgs)
    assert list(tools) == ["bash", "read"]
    assert tools["read"]["description"] == "r2"


def test_no_system_message_when_nothing_changed() -> None:
    sections = {"preamble": "P", "cwd": "<cwd>\n/x\n</cwd>"}
    first = system_message_for_update([USER], sections, [READ], timestamp=100)
    assert first == {
        "role": "system",
        "content": "",
        "sections": sections,
        "timestamp": 100,
        "toolsAdded": [READ],
    }
    assert list(first) == ["role", "content", "sections", "timestamp", "toolsAdded"]
    transcript = [first, USER]
    assert system_message_for_update(transcript, dict(sections), [dict(READ)]) is None


def test_tool_only_change_has_no_sections() -> None:
    sections = {"preamble": "P"}
    transcript = [sysmsg(sections, toolsAdded=[READ])]
    msg = system_message_for_update(transcript, sections, [READ, BASH], timestamp=7)
    assert msg == {"role": "system", "content": "", "timestamp": 7, "toolsAdded": [BASH]}
    changed = system_message_for_update(transcript, sections, [{**READ, "description": "new"}])
    assert changed is not None
    assert changed["toolsRemoved"] == [{"name": "read"}]
    assert changed["toolsAdded"][0]["description"] == "new"


def test_section_patch_contains_only_changes() -> None:
    transcript = [sysmsg({"preamble": "P", "skills": "S", "cwd": "C"})]
    msg = system_message_for_update(transcript, {"preamble": "P", "cwd": "C2"}, None, timestamp=3)
    assert msg == {
        "role": "system",
        "content": "",
        "sections": {"cwd": "C2", "skills": None},
        "timestamp": 3,
    }


def test_forced_prompt_projection_never_touches_stored_messages() -> None:
    stored = [sysmsg({"preamble": "P"}, ts=9, toolsAdded=[READ]), USER]
    snapshot = [dict(m) for m in stored]
    sent = apply_forced_prompt(stored, "FORCED", now=50)
    assert sent == [
        {"role": "system", "content": "FORCED", "toolsAdded": [READ], "timestamp": 9},
        USER,
    ]
    assert stored == snapshot
    assert apply_forced_prompt([USER], "F", now=50)[0]["timestamp"] == 50


def test_collapse_and_update_rendering() -> None:
    msgs = [sysmsg({"a": "A"}, ts=1), USER, sysmsg({"a": None, "b": "B"}, ts=2)]
    collapsed = collapse_system_messages(msgs)
    assert collapsed[0]["sections"] == {"b": "B"}
    assert collapsed[1:] == [USER]
    assert render_system_message_update(msgs[2]) == (
        'Removed system prompt section "a".\n\nUpdated system prompt section "b":\n\nB'
    )


def test_declare_tool_changes_rides_on_pending_patch() -> None:
    patch = sysmsg({"x": "X"}, ts=4)
    out = declare_tool_changes([], [patch, USER], [READ])
    first = out[0]
    assert first == {
        "role": "system",
        "content": "",
        "sections": {"x": "X"},
        "timestamp": 4,
        "toolsAdded": [READ],
    }
    # without a pending system message one is inserted before the first non-system message
    out = declare_tool_changes([first], [USER], [READ, BASH], timestamp=8)
    assert out[0] == {"role": "system", "content": "", "timestamp": 8, "toolsAdded": [BASH]}
    assert out[1] == USER
    assert declare_tool_changes([first, out[0]], [USER], [READ, BASH]) == [USER]
