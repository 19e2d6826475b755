"""``/mcp``: the servers' states, and reconnecting one, as notices (never a model request).

``/mcp`` lists each server (``demo: connected, 8 tools (codemode)``), the errors of servers
that are not connected and the configuration problems; ``/mcp reconnect [server]`` connects a
server again (without a name: the only server, else the only failed or disconnected one).
``login``/``logout`` answer that sign-in is not available, since pictx has no OAuth client.
Every subcommand first waits for the start-up connections, so the answer describes them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from .manager import McpManager

__all__ = ["DESCRIPTION", "run_mcp_command"]

DESCRIPTION: Final = "show MCP servers and their tools; /mcp reconnect [server] connects again"
USAGE: Final = "Usage: /mcp, /mcp login [server], /mcp logout [server], /mcp reconnect [server]"

Notify = Callable[[str, str], None]


async def run_mcp_command(manager: McpManager, args: str, notify: Notify) -> None:
    words = args.split()
    if len(words) > 2 or (words and words[0] not in ("reconnect", "login", "logout")):
        notify(USAGE, "warning")
        return
    await manager.ready(None)
    if not words:
        notify(manager.status_text(), "info")
        return
    action, name = words[0], (words[1] if len(words) > 1 else None)
    if action in ("login", "logout"):
        await _sign_in(manager, name, notify)
        return
    candidates = list(manager.connections)
    if name is None:
        broken = [
            n for n, c in manager.connections.items() if c.state in ("failed", "disconnected")
        ]
        if len(candidates) == 1:
            name = candidates[0]
        elif len(broken) == 1:
            name = broken[0]
        else:
            which = ", ".join(candidates) or "none"
            notify(f"Name the server to reconnect: /mcp reconnect <server> ({which})", "warning")
            return
    if name not in manager.connections:
        notify(f'No MCP server named "{name}".', "error")
        return
    connection = await manager.reconnect(name)
    if connection.state != "connected":
        notify(f'MCP server "{name}" failed to connect: {connection.error}', "error")
        return
    count = len(connection.tools)
    parts = ["connected", f"{count} tool{'s' if count != 1 else ''}"]
    if connection.has_resources:
        parts.append("resources")
    notify(f'Reconnected to MCP server "{name}" ({" · ".join(parts)}).', "info")


async def _sign_in(manager: McpManager, name: str | None, notify: Notify) -> None:
    """pictx has no OAuth client: say which servers would need it and what to do instead."""
    oauth = [
        s.name
        for s in manager.enabled_servers
        if s.transport == "http"
        and "auth" not in s.raw
        and not any(k.lower() == "authorization" for k in (s.raw.get("headers") or {}))
    ]
    if not oauth:
        notify(
            "No enabled MCP server uses OAuth. Only HTTP servers without an Authorization "
            "header do.",
            "info",
        )
        return
    if name is not None and name not in oauth:
        notify(f'No MCP server named "{name}".', "error")
        return
    notify(
        "Signing in to MCP servers is not available in pictx: set an Authorization header "
        'in mcp.json instead (e.g. "headers": {"Authorization": "Bearer ${TOKEN}"}).',
        "warning",
    )
