"""The initial loadout from pi's ``defaultTools`` setting."""

from __future__ import annotations

from pi_context.prompt import default_tool_names

BUILTINS = ["read", "bash", "edit", "write"]


def test_missing_or_malformed_setting_keeps_the_builtins() -> None:
    assert default_tool_names(None) == BUILTINS
    assert default_tool_names("read") == BUILTINS
    assert default_tool_names([]) == []  # an explicit empty list is an empty loadout


def test_plain_names_replace_the_list() -> None:
    assert default_tool_names(["write", " read ", "", 3]) == ["write", "read"]


def test_plus_and_minus_entries_change_the_list() -> None:
    assert default_tool_names(["-bash", "+grep", "+read", "-nope"]) == [
        "read",
        "edit",
        "write",
        "grep",
    ]


def test_mixing_plain_and_signed_entries_is_a_plain_list() -> None:
    assert default_tool_names(["read", "+grep"]) == ["read", "+grep"]
