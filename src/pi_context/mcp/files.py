"""Editing ``mcp.json`` and listing its servers without a session (``pictx mcp …``).

An edit changes only ``mcpServers[<name>]``: every other key of the file stays as it was, and
the file keeps its indentation (the first indentation found in it, two spaces by default), so
a hand-written file is not reformatted beyond the entry being added or removed. Missing
directories are created.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from pi_context.errors import PiContextError

from .config import McpConfig, ServerConfig, load_mcp_config, read_config_file
from .connection import McpConnection

__all__ = ["ListedServer", "McpFileError", "add_server", "list_servers", "remove_server"]

_INDENT = re.compile(r"^([ \t]+)\S", re.MULTILINE)


class McpFileError(PiContextError):
    """An ``mcp.json`` that cannot be edited (unreadable, not JSON, wrong shape)."""


def _indent_of(text: str) -> int | str:
    match = _INDENT.search(text)
    if match is None:
        return 2
    found = match.group(1)
    return len(found) if set(found) == {" "} else found


def _load(path: Path) -> tuple[dict[str, Any], int | str]:
    data, problem = read_config_file(path)
    if problem is not None:
        raise McpFileError(problem)
    text = path.read_text(encoding="utf-8-sig") if data is not None else ""
    return (data if data is not None else {}), _indent_of(text)


def _write(path: Path, data: Mapping[str, Any], indent: int | str) -> None:
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=indent, ensure_ascii=False) + "\n"
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)


def add_server(path: Path, name: str, entry: Mapping[str, Any]) -> bool:
    """Set ``mcpServers[name]``; returns whether it replaced an entry."""
    data, indent = _load(path)
    servers = dict(data.get("mcpServers") or {})
    replaced = name in servers
    servers[name] = dict(entry)
    data["mcpServers"] = servers
    _write(path, data, indent)
    return replaced


def remove_server(path: Path, name: str) -> bool:
    """Delete ``mcpServers[name]``; returns whether there was one."""
    if not path.exists():
        return False
    data, indent = _load(path)
    servers = dict(data.get("mcpServers") or {})
    if name not in servers:
        return False
    del servers[name]
    data["mcpServers"] = servers
    _write(path, data, indent)
    return True


@dataclass
class ListedServer:
    """One server as ``pictx mcp list`` reports it."""

    config: ServerConfig
    state: str
    tools: list[str] = field(default_factory=list)
    tool_exposure: dict[str, str] = field(default_factory=dict)
    resources: bool = False
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        raw = self.config.raw
        out: dict[str, Any] = {
            "name": self.config.name,
            "scope": self.config.scope,
            "source": self.config.source,
        }
        if self.config.override:
            out["override"] = self.config.override
        out |= {
            "enabled": self.config.enabled,
            "exposure": self.config.exposure,
            "transport": self.config.transport,
        }
        auth = raw.get("auth")
        if isinstance(auth, Mapping) and isinstance(auth.get("provider"), str):
            out["authProvider"] = auth["provider"]
        out |= {"state": self.state, "tools": self.tools}
        if self.tool_exposure:
            out["toolExposure"] = self.tool_exposure
        if self.resources:
            out["resources"] = True
        if self.error:
            out["error"] = self.error
        return out

    def lines(self) -> list[str]:
        config = self.config
        if self.state == "connected":
            count = len(self.tools)
            state = f"connected, {count} tool{'s' if count != 1 else ''}"
        else:
            state = self.state
        out = [f"{config.name}: {state} ({config.exposure}, {config.scope})"]
        raw = config.raw
        if config.transport == "http":
            out.append(f"  url: {raw.get('url')}")
        else:
            command = " ".join([str(raw.get("command")), *(str(a) for a in raw.get("args") or [])])
            out.append(f"  command: {command}")
        if config.override:
            out.append(f"  project override: {config.override}")
        if self.tools:
            shown = [
                f"{t} [{self.tool_exposure[t]}]" if t in self.tool_exposure else t
                for t in self.tools
            ]
            out.append(f"  tools: {', '.join(shown)}")
        if self.resources:
            out.append("  offers resources")
        if self.error:
            out.extend(f"    {line}" for line in self.error.split("\n"))
        return out


async def _probe(server: ServerConfig, cwd: str, agent_dir: Path) -> ListedServer:
    if not server.enabled:
        return ListedServer(server, "disabled")
    connection = McpConnection(server, cwd=cwd, agent_dir=agent_dir)
    try:
        await connection.connect()
        names = [str(t.get("name", "")) for t in connection.tools]
        differing = {
            n: server.exposure_for(n) for n in names if server.exposure_for(n) != server.exposure
        }
        return ListedServer(
            server,
            connection.state,
            names,
            differing,
            connection.has_resources,
            connection.error,
        )
    finally:
        await connection.close()


async def list_servers(
    agent_dir: Path, cwd: str, *, trusted: bool
) -> tuple[McpConfig, list[ListedServer]]:
    """Every configured server, the enabled ones connected in parallel (then closed)."""
    config = load_mcp_config(agent_dir, cwd, trusted=trusted)
    listed = await asyncio.gather(*(_probe(s, cwd, agent_dir) for s in config.servers))
    return config, list(listed)


def dumps(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
