"""All MCP servers of one session: configuration, background connections, tools, section.

:meth:`McpManager.start` reads ``mcp.json`` and connects every enabled server in the
background, in parallel; nothing waits for them. The first prompt of a session waits (at most
10 seconds) only for servers that have ``direct`` tools, because those change the
declarations; the others are reached through ``tool_search`` and may come later without
touching the cached prefix. A tool call waits for its own server; ``tool_search`` and the
resource tools wait for all. Whenever the tools change (a connect, a reconnect, a
``tools/list_changed``), the ``on_tools_changed`` callback tells the agent's loadout, which
re-registers them through the same path extension tools take.

:meth:`McpManager.aclose` closes every connection (stdio servers get their stdin closed,
then SIGTERM and SIGKILL of their process group); as a last resort, process groups still
alive when the interpreter exits are sent SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pi_context.tools.base import Tool

from .config import McpConfig, ServerConfig, load_mcp_config
from .naming import RESOURCE_TOOL_NAMES, assign_tool_names

if TYPE_CHECKING:
    from .codemode import CodemodeTool
    from .connection import McpConnection
    from .tools import ToolSearchTool

__all__ = ["FIRST_PROMPT_WAIT_SECONDS", "McpManager"]

FIRST_PROMPT_WAIT_SECONDS: Final = 10.0
STILL_CONNECTING: Final = (
    "MCP servers are still connecting; their tools become available once connected."
)
_WIDTH: Final = {"direct": 3, "codemode": 2, "deferred": 1}

Notify = Callable[[str, str], None]
_DISCOVERY_WORDS: Final = re.compile(r"\b(searchTools|describeNamespace|describeTool|ALL_TOOLS)\b")
_WORD: Final = re.compile(r"\w+")


class McpManager:
    """The servers of one session and the tools they bring."""

    def __init__(
        self,
        *,
        cwd: str,
        agent_dir: Path,
        trusted: bool,
        notify: Notify | None = None,
        first_prompt_wait: float = FIRST_PROMPT_WAIT_SECONDS,
    ) -> None:
        self.cwd = cwd
        self.agent_dir = Path(agent_dir)
        self.trusted = trusted
        self.notify: Notify = notify or (lambda _m, _t: None)
        self.first_prompt_wait = first_prompt_wait
        self.config = McpConfig()
        self.connections: dict[str, McpConnection] = {}
        self._startup: dict[str, asyncio.Task[None]] = {}
        self._names: dict[str, tuple[str, str]] = {}  # model name → (server, tool)
        self._tools: dict[str, Tool] = {}
        self._discovery: tuple[CodemodeTool, ToolSearchTool] | None = None
        self.all_tools: Callable[[], Sequence[Tool]] = list
        """Every registered tool of the session (the loadout sets it; codemode scripts call them)."""
        self._waited_first_prompt = False
        self.on_tools_changed: Callable[[], None] | None = None
        self.activate_tools: Callable[[Sequence[str]], None] | None = None
        self.active_tools: Callable[[], Sequence[str]] = list
        self._report_task: asyncio.Task[None] | None = None
        self.load_config()

    # -- configuration ---------------------------------------------------------------------------

    def load_config(self) -> None:
        self.config = load_mcp_config(self.agent_dir, self.cwd, trusted=self.trusted)

    @property
    def enabled_servers(self) -> list[ServerConfig]:
        return [s for s in self.config.servers if s.enabled]

    def configured_exposures(self) -> set[str]:
        out: set[str] = set()
        for server in self.enabled_servers:
            out |= server.configured_exposures
        return out

    def discovery_tools(self) -> list[str]:
        """The discovery tools to activate at start, from the configured exposures of the
        enabled servers (not their connection state): ``codemode`` (unless
        ``autoEnableCodemode`` is false) and ``tool_search``, in that order."""
        exposures = self.configured_exposures()
        out = []
        if "codemode" in exposures and self.config.auto_enable_codemode:
            out.append("codemode")
        if "deferred" in exposures:
            out.append("tool_search")
        return out

    def unreachable_warning(self, active: Sequence[str]) -> str | None:
        """The warning when MCP tools can only be reached by a discovery tool and none is
        active (e.g. ``--tools`` without them, or ``autoEnableCodemode: false``)."""
        if not self.configured_exposures() & {"codemode", "deferred"}:
            return None
        if "codemode" in active or "tool_search" in active:
            return None
        why = (
            " (autoEnableCodemode is false)"
            if not self.config.auto_enable_codemode
            and "deferred" not in self.configured_exposures()
            else ""
        )
        return (
            "MCP tools are only reachable from the codemode or tool_search tool, but neither is "
            f"active{why}; they cannot be called."
        )

    # -- connections -----------------------------------------------------------------------------

    def start(self) -> None:
        """Connect every enabled server in the background (needs a running loop)."""
        loop = asyncio.get_running_loop()
        servers = self.enabled_servers
        if servers:  # the client side of a server (and what it imports) loads with the first
            from .connection import McpConnection
        for server in servers:
            connection = McpConnection(
                server, cwd=self.cwd, agent_dir=self.agent_dir, on_tools_changed=self._changed
            )
            connection.leave_at_close = self._leave_at_close
            self.connections[server.name] = connection
            connection.spawn_early()  # every stdio server starts before the SDK loads
        early = sys.modules.get("pi_context.mcp.early")  # loaded when the command line began
        if early is not None:
            early.release_unclaimed()  # servers started for another configuration
        for server in servers:
            connection = self.connections[server.name]
            self._startup[server.name] = loop.create_task(self._connect(connection))
        if self._startup:
            self._report_task = loop.create_task(self._report_when_settled())
        elif self.config.errors:
            self._report()

    async def _connect(self, connection: McpConnection) -> None:
        await asyncio.sleep(0)  # one loop turn: start-up is never blocked
        await connection.connect()
        self._changed(connection)

    async def _report_when_settled(self) -> None:
        await asyncio.wait(list(self._startup.values()))
        self._report()

    def _report(self) -> None:
        lines = [f"  config: {e}" for e in self.config.errors]
        for name, connection in self.connections.items():
            if connection.state == "failed":
                first = (connection.error or "").split("\n", 1)[0]
                lines.append(f"  {name}: failed: {first}")
        if lines:
            self.notify(
                "MCP servers need attention:\n" + "\n".join(lines) + "\n\nRun /mcp to fix.",
                "warning",
            )

    async def wait_for_first_prompt(self) -> None:
        """Before the session's first prompt: wait for servers with direct tools (bounded)."""
        if self._waited_first_prompt:
            return
        self._waited_first_prompt = True
        tasks = [
            self._startup[s.name]
            for s in self.enabled_servers
            if "direct" in s.configured_exposures and s.name in self._startup
        ]
        if not tasks:
            return
        _done, pending = await asyncio.wait(tasks, timeout=self.first_prompt_wait)
        if pending:
            self.notify(STILL_CONNECTING, "info")

    async def ready(self, server: str | None) -> McpConnection | None:
        names = [server] if server is not None else list(self._startup)
        tasks = [self._startup[n] for n in names if n in self._startup]
        if tasks:
            await asyncio.wait(tasks)
        return self.connections.get(server) if server is not None else None

    async def reconnect(self, name: str) -> McpConnection:
        connection = self.connections[name]
        await self.ready(name)
        await connection.connect()
        self._changed(connection)
        return connection

    async def restart(self) -> None:
        """Close everything, read the files again and reconnect (``/reload``, as pi does at
        every session start)."""
        await self.aclose()
        self.connections.clear()
        self._startup.clear()
        self._tools.clear()
        self._waited_first_prompt = False
        self.load_config()
        self.start()

    def leave_servers_at_close(self) -> None:
        """The program ends with this session: :meth:`aclose` closes each stdio server's stdin
        and leaves the rest of its stop (SIGTERM after 0.5 s, SIGKILL 2 s later) to a detached
        helper instead of waiting for it."""
        self._leave_at_close = True
        for connection in self.connections.values():
            connection.leave_at_close = True

    _leave_at_close = False

    async def aclose(self) -> None:
        """Close every connection; no server process is left running."""
        for task in self._startup.values():
            if not task.done():
                task.cancel()
        if self._report_task is not None and not self._report_task.done():
            self._report_task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(*self._startup.values(), return_exceptions=True)
        await asyncio.gather(
            *(c.close() for c in self.connections.values()), return_exceptions=True
        )

    # -- tools -----------------------------------------------------------------------------------

    def _changed(self, connection: McpConnection) -> None:
        self._register(connection)
        if self.on_tools_changed is not None:
            self.on_tools_changed()

    def _register(self, connection: McpConnection) -> None:
        from .tools import McpTool

        server = connection.config
        owners = dict(self._names)
        listed = [str(t.get("name", "")) for t in connection.tools]
        names = assign_tool_names(server.name, listed, owners)
        for tool_name in [n for n, o in self._names.items() if o[0] == server.name]:
            self._tools.pop(tool_name, None)  # withdrawn tools disappear (re-added below)
        namespace_text = " ".join(
            p for p in (server.namespace, server.description, connection.instructions) if p
        )
        for tool in connection.tools:
            raw_name = str(tool.get("name", ""))
            exposure = server.exposure_for(raw_name)
            name = names[raw_name]
            self._names[name] = (server.name, raw_name)
            if exposure == "hidden":
                continue
            self._tools[name] = McpTool(
                self,
                server.name,
                name,
                tool,
                exposure,
                server.namespace,
                namespace_text=namespace_text,
            )

    def _resource_exposure(self) -> str | None:
        widest: str | None = None
        for name, connection in self.connections.items():
            config = self.config.server(name)
            if config is None or not config.enabled or config.exposure == "hidden":
                continue
            if connection.state != "connected" or not connection.has_resources:
                continue
            if widest is None or _WIDTH[config.exposure] > _WIDTH[widest]:
                widest = config.exposure
        return widest

    def resource_servers(self) -> list[McpConnection]:
        out = []
        for name, connection in sorted(self.connections.items()):
            config = self.config.server(name)
            if (
                config is not None
                and config.enabled
                and config.exposure != "hidden"
                and connection.state == "connected"
                and connection.has_resources
            ):
                out.append(connection)
        return out

    def tools(self) -> list[Tool]:
        """``tool_search`` (when any server is configured), the server tools in server order,
        then the resource tools (when some server offers resources)."""
        out: list[Tool] = []
        if self.enabled_servers:
            out += self._discovery_tools()
        order = {s.name: i for i, s in enumerate(self.config.servers)}
        server_tools = sorted(
            self._tools.values(), key=lambda t: order.get(getattr(t, "server", ""), len(order))
        )
        out.extend(server_tools)
        exposure = self._resource_exposure()
        if exposure is not None:
            from .tools import ResourceTool

            out.extend(ResourceTool(self, name, exposure) for name in RESOURCE_TOOL_NAMES)
        return out

    def _discovery_tools(self) -> tuple[CodemodeTool, ToolSearchTool]:
        """``codemode`` and ``tool_search``, made (and their modules loaded) when a server is
        first configured: a session without MCP servers never imports them."""
        if self._discovery is None:
            from .codemode import CodemodeTool
            from .tools import ToolSearchTool

            self._discovery = (CodemodeTool(self), ToolSearchTool(self))
        return self._discovery

    def search_candidates(self) -> list[Tool]:
        active = set(self.active_tools())
        return [
            t
            for t in self.tools()
            if getattr(t, "exposure", "direct") == "deferred" and t.name not in active
        ]

    # -- codemode's host ------------------------------------------------------------------------

    def script_tools(self) -> list[Tool]:
        from .codemode import script_callable

        return script_callable(self.all_tools(), self.active_tools())

    def namespaces(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for server in self.enabled_servers:
            connection = self.connections.get(server.name)
            out[server.namespace] = {
                "name": server.namespace,
                "description": server.description,
                "instructions": connection.instructions if connection is not None else None,
            }
        return out

    async def wait_for_servers(self, code: str) -> None:
        """All servers when the script searches or lists tools, else those it names."""
        if _DISCOVERY_WORDS.search(code):
            await self.ready(None)
            return
        words = set(_WORD.findall(code))
        for server in self.enabled_servers:
            if any(server.namespace in word for word in words):
                await self.ready(server.name)

    def activate(self, names: Sequence[str]) -> None:
        if self.activate_tools is not None:
            self.activate_tools(names)

    # -- the prompt ------------------------------------------------------------------------------

    def section(self) -> tuple[str, str] | None:
        """``(name, text)`` of the ``mcp_servers`` section, or ``None`` when nothing is listed."""
        if not self.enabled_servers:
            return None
        from .section import SECTION_NAME, ServerLine, render_servers_section

        lines: list[ServerLine] = []
        names: list[str] = []
        for server in self.enabled_servers:
            exposures = server.configured_exposures
            if not exposures & {"codemode", "deferred"}:
                continue
            label = "codemode" if "codemode" in exposures else "tool_search"
            summary = server.description
            connection = self.connections.get(server.name)
            if summary is None and connection is not None and connection.instructions:
                summary = connection.instructions
            if summary is not None:
                summary = summary.strip().split("\n", 1)[0].strip() or None
            lines.append(ServerLine(server.namespace, label, summary))
            names.append(server.name)
        text = render_servers_section(lines, names)
        return (SECTION_NAME, text) if text is not None else None

    # -- status ----------------------------------------------------------------------------------

    def status_lines(self) -> list[str]:
        """One line per server (``/mcp`` outside the terminal UI), then config problems."""
        out: list[str] = []
        for server in self.config.servers:
            label = server.exposure
            if not server.enabled:
                out.append(f"{server.name}: disabled ({label})")
                continue
            connection = self.connections.get(server.name)
            if connection is None:
                out.append(f"{server.name}: starting ({label})")
                continue
            state = connection.state
            if state == "disconnected":
                state = "disconnected, reconnects on next call"
            elif state == "connected":
                count = len(connection.tools)
                state += f", {count} tool{'s' if count != 1 else ''}"
            out.append(f"{server.name}: {state} ({label})")
            if connection.state != "connected" and connection.error:
                out.extend(f"    {line}" for line in connection.error.split("\n"))
        out.extend(f"config error: {e}" for e in self.config.errors)
        return out

    def status_text(self) -> str:
        if not self.config.servers and not self.config.errors:
            return (
                f"No MCP servers configured. Add them to {self.agent_dir.absolute() / 'mcp.json'}"
                " or .pi/mcp.json."
            )
        return "\n".join(self.status_lines())


def describe_state(connection: McpConnection) -> dict[str, Any]:
    return {"state": connection.state, "error": connection.error, "tools": len(connection.tools)}
