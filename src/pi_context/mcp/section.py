"""The ``mcp_servers`` system-prompt section: which servers' tools are reachable, and how.

Only servers whose tools are *not* declared are listed (an exposure that includes
``codemode`` or ``deferred``), failed and still-connecting ones included, so the model knows
where to look. The text stays stable while servers connect when each has a configured
``description``; a server without one gets its instructions' first line once connected (one
section patch, never a rewrite of the cached prefix). Servers are sorted the way pi sorts them
(case-insensitive first; ``_`` before ``-`` before digits before letters) and the whole text
is kept under 4096 UTF-16 units: summaries are shortened first, then servers dropped from the
end with a line saying how many.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pi_context._json import utf16_len

__all__ = ["SECTION_NAME", "ServerLine", "render_servers_section"]

SECTION_NAME: Final = "mcp_servers"
BUDGET: Final = 4096
MAX_SUMMARY: Final = 250
_INTRO: Final = "The tools of these MCP servers are not declared to you."
_INTRO_SEARCH: Final = (
    "Find and load the tools of servers marked (tool_search) with tool_search; "
    "loaded tools can be called from your next call on."
)
_INTRO_CODEMODE: Final = (
    "Call the tools of servers marked (codemode) from codemode scripts (await tools.<name>(args))."
)


@dataclass(frozen=True, slots=True)
class ServerLine:
    namespace: str
    label: str
    """``codemode`` or ``tool_search``."""
    summary: str | None


def _collation_key(text: str) -> tuple[list[int], str]:
    """ICU root collation, roughly: case-insensitive first, ``_`` < ``-`` < digits < letters."""
    order = []
    for ch in text.lower():
        if ch == "_":
            order.append(1)
        elif ch == "-":
            order.append(2)
        elif ch.isdigit():
            order.append(10 + ord(ch))
        elif ch.isalpha():
            order.append(1000 + ord(ch))
        else:
            order.append(3 + ord(ch) % 5)
    # lower case before upper case at equal letters
    return order, text.swapcase()


def _cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` UTF-16 units: cut to ``limit - 1``, trimmed, ``…`` added."""
    if utf16_len(text) <= limit:
        return text
    out, used = [], 0
    for ch in text:
        size = 2 if ord(ch) > 0xFFFF else 1
        if used + size > limit - 1:
            break
        out.append(ch)
        used += size
    return "".join(out).rstrip() + "…"


def render_servers_section(servers: Sequence[ServerLine], sort_names: Sequence[str]) -> str | None:
    """The section body (without its tags), or ``None`` when no server is listed.

    ``sort_names`` are the configured server names the lines are sorted by (same order).
    """
    if not servers:
        return None
    ordered = [
        s
        for _, s in sorted(
            zip(sort_names, servers, strict=True), key=lambda p: _collation_key(p[0])
        )
    ]
    labels = {s.label for s in ordered}
    intro = _INTRO
    if "codemode" in labels:
        intro += " " + _INTRO_CODEMODE
    if "tool_search" in labels:
        intro += " " + _INTRO_SEARCH
    bare = [f"- {s.namespace} ({s.label})" for s in ordered]

    def omission(count: int) -> str:
        plural = "server" if count == 1 else "servers"
        return f"- … {count} more {plural}; find their tools with tool_search"

    kept = len(ordered)
    while kept > 0:
        lines = [intro, *bare[:kept]]
        if kept < len(ordered):
            lines.append(omission(len(ordered) - kept))
        if utf16_len("\n".join(lines)) <= BUDGET:
            break
        kept -= 1
    size = utf16_len(
        "\n".join(
            [intro, *bare[:kept]] + ([omission(len(ordered) - kept)] if kept < len(ordered) else [])
        )
    )
    limit = min(MAX_SUMMARY, (BUDGET - size) // kept - 2) if kept else 0
    lines = [intro]
    for server, line in zip(ordered[:kept], bare[:kept], strict=True):
        summary = (server.summary or "").strip().split("\n", 1)[0].strip()
        if summary and limit > 0:
            line += f": {_cut(summary, limit)}"
        lines.append(line)
    if kept < len(ordered):
        lines.append(omission(len(ordered) - kept))
    return "\n".join(lines)
