"""Which tools a session may register and which start active: pi's ``--tools`` family.

* ``--tools a,b*`` (plain entries): exactly the registered tools an entry names or matches
  (``*`` = any characters, everything else literal, whole-name match) may exist and start
  active; ``defaultTools`` and the branch's recorded loadout are not used.
* ``--tools +x,-y`` (modifiers): the default tools with ``x`` added and ``y`` removed, in order;
  with ``--no-tools`` the modified list is also the allowlist.
* ``--no-tools``: no tool at all (built-in or extension), unless ``--tools`` gives the list.
* ``--no-builtin-tools``: none of the default tools start active; extension tools still do.
* ``--exclude-tools p,q``: never registered (applied last).

Parsing: comma split, items trimmed, empty items dropped. :func:`parse_tool_selection`
raises :class:`ToolSelectionError` with pi's texts for a list mixing plain names with
``+``/``-`` entries, and for a ``+``/``-`` entry with a ``*``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from msgspec import Struct

from pi_context.errors import PiContextError

__all__ = ["ToolSelection", "ToolSelectionError", "parse_tool_list", "parse_tool_selection"]


class ToolSelectionError(PiContextError):
    """A ``--tools`` value pi refuses (the message is pi's)."""


def parse_tool_list(text: str) -> list[str]:
    """``"a, b,,c"`` → ``["a", "b", "c"]``."""
    return [item.strip() for item in text.split(",") if item.strip()]


def _pattern(entry: str) -> re.Pattern[str]:
    return re.compile(
        "".join(".*" if part == "*" else re.escape(part) for part in re.split(r"(\*)", entry))
    )


def _matches(entries: Sequence[str], name: str) -> bool:
    return any(
        (_pattern(entry).fullmatch(name) is not None) if "*" in entry else entry == name
        for entry in entries
    )


_RESOURCE_TOOLS = ("list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource")


def _is_mcp_name(name: str) -> bool:
    return name.startswith("mcp__") or name in _RESOURCE_TOOLS


class ToolSelection(Struct, frozen=True):
    """The parsed flags; the defaults select nothing special (pi without flags)."""

    plain: tuple[str, ...] | None = None
    """Plain ``--tools`` entries (names or patterns), ``None`` without them."""
    modifiers: tuple[str, ...] = ()
    """``+name`` / ``-name`` entries, in order."""
    no_tools: bool = False
    no_builtin_tools: bool = False
    exclude: tuple[str, ...] = ()

    @property
    def replaces_defaults(self) -> bool:
        """``--tools`` was given: the branch's recorded loadout is not restored."""
        return self.plain is not None or bool(self.modifiers)

    def allows(self, name: str, defaults: Sequence[str]) -> bool:
        """Whether a tool called ``name`` may be registered at all (``defaults``: the
        ``defaultTools`` names, which ``--no-tools`` with modifiers starts from).

        MCP tools (``mcp__…`` and the resource tools) stay registered under a ``--tools``
        list that names no ``mcp__`` entry, so ``tool_search`` can still load the deferred
        ones; they are then not activated (:meth:`activates`)."""
        if _matches(self.exclude, name):
            return False
        if self.plain is not None:
            if self.plain and not self.no_tools and _is_mcp_name(name) and not self._names_mcp:
                return True
            return _matches(self.plain, name)
        if self.no_tools:
            return bool(self.modifiers) and name in self.modified(defaults)
        return True

    @property
    def _names_mcp(self) -> bool:
        return any(entry.startswith("mcp__") for entry in self.plain or ())

    def unknown_names(self, registered: Sequence[str]) -> list[str]:
        """The ``--tools`` entries (names, patterns, ``+name``) that no ``registered`` tool
        answers to: pi drops them without a word; the CLI warns. MCP entries (their servers
        connect later) and excluded ones are left out."""
        entries = [*(self.plain or ()), *(e[1:] for e in self.modifiers if e.startswith("+"))]
        return [
            entry
            for entry in dict.fromkeys(entries)
            if not _is_mcp_name(entry)
            and not _matches(self.exclude, entry)
            and not any(_matches([entry], n) for n in registered)
        ]

    def activates(self, name: str) -> bool:
        """Whether a ``direct`` tool registered later (an MCP server connecting) becomes
        active: always without ``--tools``, else only when the list names or matches it."""
        if self.plain is not None:
            return _matches(self.plain, name)
        return not (self.no_tools and not self.modifiers)

    def modified(self, defaults: Sequence[str]) -> list[str]:
        """``defaults`` with the ``+``/``-`` entries applied in order."""
        names = list(defaults)
        for entry in self.modifiers:
            name = entry[1:]
            if entry.startswith("+") and name not in names:
                names.append(name)
            elif entry.startswith("-") and name in names:
                names.remove(name)
        return names

    def initially_active(self, registered: Sequence[str], defaults: Sequence[str]) -> list[str]:
        """The active tools at start among ``registered`` (extension tools included) given
        the ``defaultTools`` names."""
        if self.plain is not None:
            return [n for n in registered if self.allows(n, defaults) and _matches(self.plain, n)]
        if self.no_builtin_tools or (self.no_tools and not self.modifiers):
            return []
        chosen = self.modified(defaults)
        return [n for n in chosen if n in registered and self.allows(n, defaults)]


def parse_tool_selection(
    tools: str | None,
    *,
    no_tools: bool = False,
    no_builtin_tools: bool = False,
    exclude: str | None = None,
    flag: str = "--tools",
) -> ToolSelection:
    """The selection for the flags as given (``flag``: how ``--tools`` was typed)."""
    entries = parse_tool_list(tools) if tools is not None else None
    modifiers = tuple(e for e in entries or () if e[:1] in "+-")
    plain = tuple(e for e in entries or () if e[:1] not in "+-")
    if modifiers and plain:
        raise ToolSelectionError(f"{flag}: tool names cannot be mixed with +name or -name entries")
    for entry in modifiers:
        if "*" in entry:
            raise ToolSelectionError(
                f"{flag}: +name and -name entries take exact tool names, not patterns: {entry}"
            )
    return ToolSelection(
        plain=plain if entries is not None and not modifiers else None,
        modifiers=modifiers,
        no_tools=no_tools,
        no_builtin_tools=no_builtin_tools,
        exclude=tuple(parse_tool_list(exclude)) if exclude else (),
    )
