"""pi's ``--tools`` family: parsing, pi's errors, what may be
registered and what starts active."""

from __future__ import annotations

import pytest

from pi_context.agent.tool_selection import (
    ToolSelectionError,
    parse_tool_list,
    parse_tool_selection,
)
from pi_context.testing import ScriptedModel

from .conftest import MakeSession

DEFAULTS = ["read", "bash", "edit", "write"]
REGISTERED = ["read", "bash", "edit", "write", "grep", "find", "ls", "mcp__x"]


def test_lists_are_split_trimmed_and_empty_items_dropped() -> None:
    assert parse_tool_list(" read , ,bash,") == ["read", "bash"]


def test_mixing_names_with_modifiers_and_patterns_in_modifiers_are_refused() -> None:
    with pytest.raises(ToolSelectionError) as mixed:
        parse_tool_selection("read,+grep", flag="-t")
    assert str(mixed.value) == "-t: tool names cannot be mixed with +name or -name entries"
    with pytest.raises(ToolSelectionError) as pattern:
        parse_tool_selection("+gr*")
    assert str(pattern.value) == (
        "--tools: +name and -name entries take exact tool names, not patterns: +gr*"
    )


def test_plain_entries_are_the_allowlist_and_the_active_set() -> None:
    sel = parse_tool_selection("read,e*")
    assert sel.replaces_defaults
    allowed = [n for n in REGISTERED if sel.allows(n, DEFAULTS)]
    # an MCP tool stays registered (tool_search may load it) while no entry names mcp__...
    assert allowed == ["read", "edit", "mcp__x"]
    assert sel.initially_active(allowed, DEFAULTS) == ["read", "edit"]
    assert not sel.activates("mcp__x")
    # ... and must match once one does
    named = parse_tool_selection("read,mcp__y*")
    assert [n for n in REGISTERED if named.allows(n, DEFAULTS)] == ["read"]
    assert named.allows("mcp__y__echo", DEFAULTS)
    assert named.activates("mcp__y__echo")
    # excluding mcp__* leaves the resource tools
    excluded = parse_tool_selection(None, exclude="mcp__*")
    assert not excluded.allows("mcp__y__echo", DEFAULTS)
    assert excluded.allows("list_mcp_resources", DEFAULTS)
    # "*" is the only wildcard; other characters are literal and the whole name must match
    assert not parse_tool_selection("rea.").allows("read", DEFAULTS)
    assert not parse_tool_selection("ead").allows("read", DEFAULTS)


def test_modifiers_change_the_defaults_in_order() -> None:
    sel = parse_tool_selection("+grep,-bash,+bash,-write")
    assert all(sel.allows(n, DEFAULTS) for n in REGISTERED)
    assert sel.initially_active(REGISTERED, DEFAULTS) == ["read", "edit", "grep", "bash"]


def test_no_tools_no_builtin_tools_and_exclusions() -> None:
    none = parse_tool_selection(None, no_tools=True)
    assert not any(none.allows(n, DEFAULTS) for n in REGISTERED)
    assert none.initially_active(REGISTERED, DEFAULTS) == []
    listed = parse_tool_selection("ls", no_tools=True)
    assert [n for n in REGISTERED if listed.allows(n, DEFAULTS)] == ["ls"]
    modified = parse_tool_selection("+grep", no_tools=True)
    assert [n for n in REGISTERED if modified.allows(n, DEFAULTS)] == [*DEFAULTS, "grep"]
    no_builtin = parse_tool_selection(None, no_builtin_tools=True)
    assert no_builtin.allows("read", DEFAULTS)
    assert no_builtin.initially_active(REGISTERED, DEFAULTS) == []
    excluded = parse_tool_selection("read,bash", exclude="ba*")
    assert excluded.initially_active(["read", "bash"], DEFAULTS) == ["read"]
    assert not excluded.allows("bash", DEFAULTS)


async def test_the_session_declares_only_the_selected_tools(make_session: MakeSession) -> None:
    agent = await make_session(ScriptedModel([]), tool_selection=parse_tool_selection("b*,write"))
    assert agent.get_active_tools() == ["bash", "write"]
    bare = await make_session(
        ScriptedModel([]), tool_selection=parse_tool_selection(None, no_tools=True)
    )
    assert bare.get_active_tools() == []
