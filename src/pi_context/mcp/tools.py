"""MCP tools as agent tools: each server tool, the three resource tools and ``tool_search``.

Every tool carries an ``exposure``: ``direct`` tools are declared to the model as soon as
their server connects; ``deferred`` ones are only registered, found by ``tool_search`` and
declared from the next request once loaded; ``model-only`` marks ``tool_search`` itself. The
calls go through :class:`McpServers`, the seam to the connections (the manager implements
it), so a tool never holds a connection that a reconnect replaced.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from pi_context._json import js_stringify
from pi_context.errors import ToolError
from pi_context.messages import text_block
from pi_context.tools.base import AbortSignal, Tool, ToolOutcome, UpdateCallback

from .codemode_shapes import mcp_shape
from .convert import convert_blocks, limit_output, structured_text
from .naming import RESOURCE_TOOL_NAMES, is_mcp_tool_name
from .search import SearchDocument, rank_tools

if TYPE_CHECKING:
    from .connection import McpConnection

__all__ = [
    "RESOURCE_TOOL_NAMES",
    "McpServers",
    "McpTool",
    "ResourceTool",
    "ToolSearchTool",
    "is_mcp_tool_name",
]

TOOL_SEARCH: Final = "tool_search"


class McpServers(Protocol):
    """What the tools need from the manager."""

    async def ready(self, server: str | None) -> McpConnection | None:
        """Wait for ``server``'s start-up connection (``None``: all); the connection."""

    def resource_servers(self) -> list[McpConnection]:
        """Connected, enabled, not hidden servers offering resources, sorted by name."""

    def search_candidates(self) -> list[Tool]:
        """Registered deferred tools not active yet."""

    def activate(self, names: Sequence[str]) -> None:
        """Add tools to the active set (declared from the next request)."""


def _description(server: str, tool: Mapping[str, Any], configured: str | None = None) -> str:
    text = tool.get("description")
    if isinstance(text, str) and text.strip():
        return text.strip()
    title = tool.get("title") or (tool.get("annotations") or {}).get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()
    return f"MCP tool {tool.get('name', '')} from server {server}"


def _parameters(tool: Mapping[str, Any]) -> dict[str, Any]:
    schema = dict(tool.get("inputSchema") or {})
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def _result_outcome(
    data: Mapping[str, Any], server: str, tool: str, *, resources_reachable: bool
) -> ToolOutcome:
    blocks = data.get("content") or []
    content = convert_blocks(blocks, server, resources_reachable=resources_reachable)
    if not blocks and "structuredContent" in data:
        content = [text_block(structured_text(data["structuredContent"]))]
    is_error = data.get("isError") is True
    if is_error and not any(b["type"] == "text" and b["text"] for b in content):
        content.append(text_block(f"MCP tool {server}/{tool} returned an error"))
    content, full = limit_output(content)
    details: dict[str, Any] = {"server": server, "tool": tool}
    if full is not None:
        details["fullOutputPath"] = full
    return ToolOutcome(content, details, is_error)


class McpTool(Tool):
    """One tool of one server, under its model-facing name."""

    def __init__(
        self,
        servers: McpServers,
        server: str,
        name: str,
        tool: Mapping[str, Any],
        exposure: str,
        namespace: str,
        *,
        namespace_text: str = "",
    ) -> None:
        self._servers = servers
        self.server = server
        self.tool_name = str(tool.get("name", ""))
        self.name = name
        self.description = _description(server, tool)
        self.parameters = _parameters(tool)
        self.exposure = "direct" if exposure == "direct" else "deferred"
        self.namespace = namespace
        self.namespace_text = namespace_text
        self.codemode_shape = mcp_shape(tool.get("outputSchema"))

    async def _connection(self) -> McpConnection:
        """This tool's server once it has started; a :class:`ToolError` the model sees when it
        could not start or has gone away."""
        connection = await self._servers.ready(self.server)
        if connection is None or connection.state == "closed":
            raise ToolError(f'MCP server "{self.server}" is not available')
        return connection

    async def call_raw(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The whole ``CallToolResult`` (codemode scripts get it as it is, never truncated)."""
        connection = await self._connection()
        return await connection.call_tool(self.tool_name, arguments)

    async def execute(
        self,
        call_id: str,
        arguments: dict[str, Any],
        *,
        cwd: Path,
        signal: AbortSignal | None = None,
        on_update: UpdateCallback | None = None,
    ) -> ToolOutcome:
        del call_id, cwd, signal
        connection = await self._connection()

        def progress(value: float, total: float | None, message: str | None) -> None:
            if on_update is None:
                return
            number = f"{value:g}" + (f"/{total:g}" if total is not None else "")
            text = message or f"Progress {number}"
            on_update(
                ToolOutcome([text_block(text)], {"server": self.server, "tool": self.tool_name})
            )

        try:
            data = await connection.call_tool(self.tool_name, arguments, progress)
        except Exception as exc:  # noqa: BLE001 - the model sees the message
            raise ToolError(str(exc)) from None
        reachable = any(c.name == self.server for c in self._servers.resource_servers())
        return _result_outcome(data, self.server, self.tool_name, resources_reachable=reachable)


_RESOURCE_SHAPES: Final = {
    "list_mcp_resources": "`{ server?, resources, nextCursor?, errors? }`",
    "list_mcp_resource_templates": "`{ server?, resourceTemplates, nextCursor?, errors? }`",
    "read_mcp_resource": "`{ server, uri, contents }`",
}
_SERVER_PARAM: Final = {
    "type": "string",
    "description": "Name of the MCP server; omit to ask every server",
}
_CURSOR_PARAM: Final = {"type": "string", "description": "Cursor of the next page (needs server)"}


class ResourceTool(Tool):
    """``list_mcp_resources``, ``list_mcp_resource_templates`` or ``read_mcp_resource``."""

    def __init__(self, servers: McpServers, name: str, exposure: str) -> None:
        self._servers = servers
        self.name = name
        self.codemode_shape = _RESOURCE_SHAPES[name]
        self.exposure = "direct" if exposure == "direct" else "deferred"
        if name == "read_mcp_resource":
            self.description = (
                "Read one resource of an MCP server by its URI (find URIs with list_mcp_resources)."
            )
            self.parameters = {
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "Name of the MCP server"},
                    "uri": {"type": "string", "description": "URI of the resource"},
                },
                "required": ["server", "uri"],
                "additionalProperties": False,
            }
        else:
            what = "resources" if name == "list_mcp_resources" else "resource templates"
            self.description = (
                f"List the {what} MCP servers offer (files, records, documents the model can read)."
            )
            self.parameters = {
                "type": "object",
                "properties": {"server": dict(_SERVER_PARAM), "cursor": dict(_CURSOR_PARAM)},
                "additionalProperties": False,
            }

    def _details(self, server: str) -> dict[str, Any]:
        return {"server": server, "tool": self.name}

    async def execute(
        self,
        call_id: str,
        arguments: dict[str, Any],
        *,
        cwd: Path,
        signal: AbortSignal | None = None,
        on_update: UpdateCallback | None = None,
    ) -> ToolOutcome:
        del call_id, cwd, signal, on_update
        await self._servers.ready(None)
        if self.name == "read_mcp_resource":
            return await self._read(arguments)
        payload, server = await self._list(arguments)
        return self._outcome(payload, server)

    async def call_raw(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The payload as a codemode script gets it (not truncated)."""
        await self._servers.ready(None)
        if self.name == "read_mcp_resource":
            server, uri = self._read_target(arguments)
            data = await self._read_data(server, uri)
            return {"server": server, "uri": uri, "contents": data.get("contents") or []}
        return (await self._list(arguments))[0]

    def _server(self, name: str) -> McpConnection:
        reachable = self._servers.resource_servers()
        found = next((c for c in reachable if c.name == name), None)
        if found is None:
            names = ", ".join(c.name for c in reachable) or "none"
            raise ToolError(
                f'MCP server "{name}" has no resources. Servers with resources: {names}'
            )
        return found

    async def _list(self, arguments: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
        kind = "resources" if self.name == "list_mcp_resources" else "resourceTemplates"
        method = "resources" if kind == "resources" else "templates"
        server, cursor = arguments.get("server"), arguments.get("cursor")
        if cursor is not None and not server:
            raise ToolError("cursor can only be used when a server is specified")
        if server:
            connection = self._server(str(server))
            page = await self._page(connection, method, cursor)
            payload: dict[str, Any] = {
                "server": connection.name,
                kind: _items(connection.name, page.get(kind)),
            }
            if page.get("nextCursor"):
                payload["nextCursor"] = page["nextCursor"]
            return payload, connection.name
        items: list[dict[str, Any]] = []
        errors: list[dict[str, str]] = []
        for connection in self._servers.resource_servers():
            page_cursor: str | None = None
            try:
                while True:
                    page = await self._page(connection, method, page_cursor)
                    items.extend(_items(connection.name, page.get(kind)))
                    page_cursor = page.get("nextCursor") or None
                    if page_cursor is None:
                        break
            except ToolError as exc:
                errors.append({"server": connection.name, "error": str(exc)})
        payload = {kind: items}
        if errors:
            payload["errors"] = errors
        return payload, ""

    async def _page(self, connection: McpConnection, method: str, cursor: Any) -> dict[str, Any]:
        try:
            return await connection.list_page(method, str(cursor) if cursor else None)
        except Exception as exc:  # noqa: BLE001 - reported to the model
            if method == "templates" and "not found" in str(exc).lower():
                return {"resourceTemplates": []}
            raise ToolError(str(exc)) from None

    def _read_target(self, arguments: Mapping[str, Any]) -> tuple[str, str]:
        server, uri = str(arguments.get("server") or ""), str(arguments.get("uri") or "")
        if not server.strip():
            raise ToolError("server must be provided")
        if not uri.strip():
            raise ToolError("uri must be provided")
        return server, uri

    async def _read_data(self, server: str, uri: str) -> dict[str, Any]:
        connection = self._server(server)
        try:
            return await connection.read_resource(uri)
        except Exception as exc:  # noqa: BLE001 - reported to the model
            raise ToolError(str(exc)) from None

    async def _read(self, arguments: Mapping[str, Any]) -> ToolOutcome:
        server, uri = self._read_target(arguments)
        data = await self._read_data(server, uri)
        contents = data.get("contents") or []
        if not contents:
            return ToolOutcome([text_block(f"Resource {uri} is empty.")], self._details(server))
        blocks: list[Any] = []
        for item in contents:
            if len(contents) > 1:
                blocks.append(text_block(f"{item.get('uri', uri)}:"))
            blocks.extend(convert_blocks([{"type": "resource", "resource": item}], server))
        content, full = limit_output(blocks)
        details = self._details(server)
        if full is not None:
            details["fullOutputPath"] = full
        return ToolOutcome(content, details)

    def _outcome(self, payload: Mapping[str, Any], server: str) -> ToolOutcome:
        content, full = limit_output([text_block(js_stringify(payload))])
        details = self._details(server)
        if full is not None:
            details["fullOutputPath"] = full
        return ToolOutcome(content, details)


def _items(server: str, items: Any) -> list[dict[str, Any]]:
    out = []
    for item in items or ():
        uri = str(item.get("uri") or item.get("uriTemplate") or "")
        mime = str(item.get("mimeType") or "")
        if uri.startswith("ui://") or "profile=mcp-app" in mime:
            continue
        entry = {"server": server}
        entry.update({k: v for k, v in item.items() if k not in ("_meta", "icons")})
        entry.setdefault("name", uri)
        out.append(entry)
    return out


TOOL_SEARCH_DESCRIPTION: Final = """# Tool discovery

Search the tools that are available but not declared yet (for example the tools of MCP \
servers) by keywords; the matching tools are loaded and can be called from your next call \
on. Use it whenever you need a tool that is not declared, in particular to discover MCP \
tools."""


class ToolSearchTool(Tool):
    """Finds deferred tools by BM25 over their metadata and loads the matches."""

    name = TOOL_SEARCH
    exposure = "model-only"
    description = TOOL_SEARCH_DESCRIPTION
    prompt_snippet = "Find tools that are not loaded yet and load them"
    parameters: dict[str, Any] = {  # noqa: RUF012 - one schema shared by instances
        "type": "object",
        "required": ["query"],
        "properties": {
            "query": {"type": "string", "description": "Keywords describing the tool you need"},
            "limit": {"type": "number", "description": "Most tools to load (default 8)"},
        },
    }

    def __init__(self, servers: McpServers) -> None:
        self._servers = servers

    async def execute(
        self,
        call_id: str,
        arguments: dict[str, Any],
        *,
        cwd: Path,
        signal: AbortSignal | None = None,
        on_update: UpdateCallback | None = None,
    ) -> ToolOutcome:
        del call_id, cwd, signal, on_update
        query = str(arguments.get("query", "")).strip()
        if not query:
            raise ToolError("query must not be empty")
        limit = arguments.get("limit", 8)
        if not (
            isinstance(limit, (int, float))
            and not isinstance(limit, bool)
            and limit >= 1
            and float(limit).is_integer()
        ):
            raise ToolError("limit must be a positive integer")
        await self._servers.ready(None)
        candidates = self._servers.search_candidates()
        docs = [
            SearchDocument(t.name, t.description, t.parameters, getattr(t, "namespace_text", ""))
            for t in candidates
        ]
        found = rank_tools(query, docs, int(limit))
        if not found:
            return ToolOutcome([text_block("No matching tools found.")], {"loaded": []})
        names = [d.name for d in found]
        self._servers.activate(names)
        noun = "tool" if len(names) == 1 else "tools"
        lines = [f"Loaded {len(names)} {noun}. They are available from your next call:"]
        lines += [
            f"- {d.name}: {d.description.strip().splitlines()[0] if d.description.strip() else ''}"
            for d in found
        ]
        return ToolOutcome([text_block("\n".join(lines))], {"loaded": names})


def tool_names(tools: Sequence[Tool]) -> list[str]:
    return [t.name for t in tools]
