"""MCP servers as pi runs them: ``mcp.json``, connections, tools, ``tool_search``, the section.

:class:`McpManager` is what an agent session holds; :mod:`.config` reads and validates the
files, :mod:`.connection` talks to one server over the official ``mcp`` SDK, :mod:`.tools`
turns server tools into agent tools, :mod:`.search` ranks them for ``tool_search``,
:mod:`.section` writes the ``mcp_servers`` prompt section, :mod:`.convert` turns results into
content blocks and :mod:`.files` edits ``mcp.json`` for ``pictx mcp add/remove``.
"""

from pi_context import _lazy

__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
