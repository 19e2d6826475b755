"""MCP servers as pi runs them: ``mcp.json``, connections, tools, ``tool_search``, the section.

:class:`McpManager` is what an agent session holds; :mod:`.config` reads and validates the
files, :mod:`.connection` talks to one server over the official ``mcp`` SDK, :mod:`.tools`
turns server tools into agent tools, :mod:`.search` ranks them for ``tool_search``,
:mod:`.section` writes the ``mcp_servers`` prompt section, :mod:`.convert` turns results into
content blocks and :mod:`.files` edits ``mcp.json`` for ``pictx mcp add/remove``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_context import _lazy

if TYPE_CHECKING:
    from pi_context.mcp.config import McpConfig, ServerConfig, load_mcp_config
    from pi_context.mcp.manager import McpManager
    from pi_context.mcp.naming import RESOURCE_TOOL_NAMES, is_mcp_tool_name

__all__ = [
    "RESOURCE_TOOL_NAMES",
    "McpConfig",
    "McpManager",
    "ServerConfig",
    "is_mcp_tool_name",
    "load_mcp_config",
]

_HOMES = _lazy.homes(
    {
        "pi_context.mcp.config": (
            "McpConfig",
            "ServerConfig",
            "load_mcp_config",
        ),
        "pi_context.mcp.manager": ("McpManager",),
        "pi_context.mcp.naming": (
            "RESOURCE_TOOL_NAMES",
            "is_mcp_tool_name",
        ),
    }
)
"""Where each public name lives; imported from there when first used."""

__getattr__, __dir__ = _lazy.hooks(globals(), _HOMES, __all__)
