"""mcp.json: validation messages, merging, overrides, trust."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_context.mcp.config import load_mcp_config, validate_entry

STDIO = {"command": "srv"}


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("name", "entry", "message"),
    [
        ("a b", STDIO, 'invalid server name "a b" (use letters, digits, "_" and "-")'),
        ("s", [], 'server "s" must be an object'),
        ("s", {**STDIO, "enabled": "yes"}, 'server "s": enabled must be a boolean'),
        ("s", {**STDIO, "description": 1}, 'server "s": description must be a string'),
        ("s", {**STDIO, "timeout": 0}, 'server "s": timeout must be a positive number of seconds'),
        (
            "s",
            {"type": "sse", "url": "http://x"},
            'server "s": legacy SSE transport is not supported; use the streamable HTTP URL',
        ),
        ("s", {"url": "ftp://x"}, 'server "s": url must be an http or https URL'),
        (
            "s",
            {"url": "http://x", "headers": {"a": 1}},
            'server "s": headers must map names to strings',
        ),
        ("s", {"url": "http://x", "oauth": 1}, 'server "s": oauth must be an object'),
        (
            "s",
            {"url": "http://x", "oauth": {"callbackPort": 0}},
            'server "s": oauth.callbackPort must be a port number',
        ),
        ("s", {**STDIO, "args": [1]}, 'server "s": args must be an array of strings'),
        ("s", {**STDIO, "env": {"A": 1}}, 'server "s": env must map names to strings'),
        ("s", {**STDIO, "cwd": 1}, 'server "s": cwd must be a string'),
        ("s", {}, 'server "s" needs either "command" (stdio) or "url" (streamable HTTP)'),
        (
            "s",
            {**STDIO, "exposure": "x"},
            'server "s": exposure must be one of "codemode", "deferred", "direct", "hidden"',
        ),
        (
            "s",
            {**STDIO, "toolExposure": []},
            'server "s": toolExposure must map tool names to exposures',
        ),
        (
            "s",
            {**STDIO, "toolExposure": {"t": "x"}},
            'server "s": toolExposure "t" must be one of "codemode", "deferred", "direct", "hidden"',
        ),
        (
            "s",
            {"url": "https://x", "auth": {}},
            'server "s": auth.provider must be a provider name',
        ),
        (
            "s",
            {"url": "http://example.com", "auth": {"provider": "p"}},
            'server "s": auth requires an https URL, or http on localhost, 127.0.0.1, or [::1]',
        ),
    ],
)
def test_validation_messages(name: str, entry: Any, message: str) -> None:
    assert validate_entry(name, entry, project=False) == message


def test_valid_entries_and_aliases() -> None:
    assert validate_entry("s", {**STDIO, "exposure": "codemode-deferred"}, project=False) is None
    assert (
        validate_entry(
            "s", {"url": "http://127.0.0.1:9/mcp", "auth": {"provider": "p"}}, project=False
        )
        is None
    )
    assert (
        validate_entry("s", {"url": "http://x", "command": "c"}, project=False) is None
    )  # url wins


def test_broken_files_are_reported_with_their_path(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write(agent / "mcp.json", "{nope")
    config = load_mcp_config(agent, tmp_path, trusted=True)
    assert config.servers == []
    assert config.errors[0].startswith(f"{agent / 'mcp.json'}: ")
    write(agent / "mcp.json", {"mcpServers": []})
    config = load_mcp_config(agent, tmp_path, trusted=True)
    assert config.errors == [
        f'{agent / "mcp.json"}: expected an object with an "mcpServers" object'
    ]


def test_one_bad_entry_leaves_the_others(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write(
        agent / "mcp.json",
        {
            "mcpServers": {"good": STDIO, "bad": {}, "a-b": STDIO, "a_b": STDIO},
            "autoEnableCodemode": 3,
        },
    )
    config = load_mcp_config(agent, tmp_path, trusted=True)
    assert [s.name for s in config.servers] == ["good", "a-b"]
    path = agent / "mcp.json"
    assert config.errors == [
        f"{path}: autoEnableCodemode must be a boolean",
        f'{path}: server "bad" needs either "command" (stdio) or "url" (streamable HTTP)',
        f'{path}: server "a_b" conflicts with "a-b"',
    ]


def test_project_replaces_in_place_appends_and_overrides(tmp_path: Path) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "proj"
    write(
        agent / "mcp.json",
        {
            "mcpServers": {"a": STDIO, "b": {**STDIO, "description": "B"}, "c": STDIO},
            "autoEnableCodemode": True,
        },
    )
    project = write(
        cwd / ".pi" / "mcp.json",
        {
            "mcpServers": {
                "a": {"url": "http://127.0.0.1:1/mcp"},
                "b": {"exposure": "direct", "enabled": False},
                "n": STDIO,
                "ghost": {"enabled": False},
                "c": {"description": "no"},
                "auth": {"url": "https://x", "auth": {"provider": "p"}},
            },
            "autoEnableCodemode": False,
        },
    )
    config = load_mcp_config(agent, cwd, trusted=True)
    assert [(s.name, s.scope) for s in config.servers] == [
        ("a", "project"),
        ("b", "global"),
        ("c", "global"),
        ("n", "project"),
    ]
    a, b = config.servers[0], config.servers[1]
    assert a.transport == "http"
    assert (b.exposure, b.enabled, b.description, b.override, b.source) == (
        "direct",
        False,
        "B",
        str(project),
        str(agent / "mcp.json"),
    )
    assert config.auto_enable_codemode is False
    assert config.errors == [
        f'{project}: server "ghost" needs "command" or "url", or a global server to override',
        f'{project}: server "c": an override can only set enabled, exposure, toolExposure',
        f'{project}: server "auth": auth is only allowed in the global mcp.json',
    ]


def test_untrusted_project_file_is_not_read(tmp_path: Path) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "proj"
    project = write(cwd / ".pi" / "mcp.json", {"mcpServers": {"n": STDIO}})
    config = load_mcp_config(agent, cwd, trusted=False)
    assert config.servers == []
    assert config.ignored_project_file == str(project)


def test_tool_exposure_exact_then_first_pattern_then_server(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write(
        agent / "mcp.json",
        {
            "mcpServers": {
                "s": {
                    **STDIO,
                    "exposure": "deferred",
                    "toolExposure": {"get_*": "direct", "get_x": "hidden", "*": "codemode"},
                }
            }
        },
    )
    (server,) = load_mcp_config(agent, tmp_path, trusted=True).servers
    assert server.exposure_for("get_x") == "hidden"
    assert server.exposure_for("get_y") == "direct"
    assert server.exposure_for("put") == "codemode"
    assert server.configured_exposures == {"deferred", "direct", "hidden", "codemode"}


def test_bom_and_home_expansion(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "mcp.json").write_bytes(
        b"\xef\xbb\xbf"
        + json.dumps(
            {"mcpServers": {"s": {"command": "~/bin/srv", "args": ["~/x", "a~"], "cwd": "~"}}}
        ).encode()
    )
    (server,) = load_mcp_config(agent, tmp_path, trusted=True).servers
    home = str(Path.home())
    assert server.raw["command"] == f"{home}/bin/srv"
    assert server.raw["args"] == [f"{home}/x", "a~"]
    assert server.raw["cwd"] == home
