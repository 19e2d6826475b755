"""Tool names for MCP tools: ``mcp__<server>__<tool>``, sanitized and at most 64 characters.

Every character outside ``[A-Za-z0-9_]`` becomes ``_``. A name longer than 64 characters, or
one already owned by another (server, tool) pair, or one two tools of the same listing
sanitize to, becomes ``<first 55 characters>_<8 hex>`` where the hex is the start of the
SHA-256 of ``<server>\\0<tool>`` — so the model always gets a valid, unique, stable name, and
a tool keeps its name across refreshes of the listing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Final

__all__ = [
    "MAX_TOOL_NAME",
    "RESOURCE_TOOL_NAMES",
    "assign_tool_names",
    "is_mcp_tool_name",
    "sanitize",
    "tool_identifier",
]

MAX_TOOL_NAME: Final = 64
_KEEP: Final = 55
RESOURCE_TOOL_NAMES: Final = (
    "list_mcp_resources",
    "list_mcp_resource_templates",
    "read_mcp_resource",
)


def is_mcp_tool_name(name: str) -> bool:
    """A server tool (``mcp__…``) or one of the resource tools."""
    return name.startswith("mcp__") or name in RESOURCE_TOOL_NAMES


_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_]")
_NOT_IDENTIFIER: Final = re.compile(r"[^A-Za-z0-9_$]")


def sanitize(text: str) -> str:
    return _UNSAFE.sub("_", text)


def tool_identifier(name: str) -> str:
    """A tool name as a JavaScript identifier (``tools.<id>`` in codemode scripts)."""
    return _NOT_IDENTIFIER.sub("_", name)


def _hashed(base: str, server: str, tool: str) -> str:
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{base[:_KEEP]}_{digest}"


def assign_tool_names(
    server: str,
    tools: Sequence[str],
    owners: Mapping[str, tuple[str, str]],
) -> dict[str, str]:
    """Model-facing names for ``tools`` of ``server``.

    ``owners`` maps names already in use (by any server, this one's earlier listings
    included) to their (server, tool); a name this server's tool already owns is kept.
    """
    plain = {tool: sanitize(f"mcp__{server}__{tool}") for tool in tools}
    counts: dict[str, int] = {}
    for name in plain.values():
        counts[name] = counts.get(name, 0) + 1
    out: dict[str, str] = {}
    taken = set()
    for tool in tools:
        owned = next((n for n, o in owners.items() if o == (server, tool)), None)
        if owned is not None and owned not in taken:
            out[tool] = owned
            taken.add(owned)
            continue
        name = plain[tool]
        owner = owners.get(name)
        if (
            len(name) > MAX_TOOL_NAME
            or counts[name] > 1
            or (owner is not None and owner != (server, tool))
            or name in taken
        ):
            name = _hashed(name, server, tool)
        out[tool] = name
        taken.add(name)
    return out
