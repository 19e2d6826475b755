"""Resolving env / header values at connect time."""

from __future__ import annotations

import pytest

from pi_context.mcp.values import ValueResolutionError, resolve_value, resolve_values

ENV = {"TOKEN": "t0k", "EMPTY": ""}


def test_templates() -> None:
    assert resolve_value("Bearer ${TOKEN}", "x", ENV) == "Bearer t0k"
    assert resolve_value("$TOKEN/$$/$!", "x", ENV) == "t0k/$/!"
    assert resolve_value("plain", "x", ENV) == "plain"


def test_missing_or_empty_variables_fail_naming_the_value() -> None:
    with pytest.raises(ValueResolutionError) as one:
        resolve_values({"Authorization": "Bearer ${NOPE}"}, 'MCP server "s" header', ENV)
    assert str(one.value) == (
        'Failed to resolve MCP server "s" header "Authorization" from environment variable: NOPE'
    )
    with pytest.raises(ValueResolutionError) as two:
        resolve_value("$EMPTY$NOPE", "v", ENV)
    assert str(two.value) == "Failed to resolve v from environment variables: EMPTY, NOPE"


def test_shell_commands() -> None:
    assert resolve_value("!printf ' secret \\n'", "x", ENV) == "secret"
    with pytest.raises(ValueResolutionError) as failed:
        resolve_value("!exit 3", "x", ENV)
    assert str(failed.value) == "Failed to resolve x from shell command: exit 3"
    with pytest.raises(ValueResolutionError):
        resolve_value("!true", "x", ENV)  # empty output
