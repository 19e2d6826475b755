"""The ``find`` tool: paths below a directory that match a glob.

A pattern without ``/`` is matched against each entry's name at any depth; a pattern with ``/``
against the path from the search directory (an absolute pattern against the absolute path), a
leading ``./`` dropped. ``*`` and ``?`` stay within one path component, ``**`` crosses
directories, ``[...]`` and ``{a,b}`` work as in shells. An all-lowercase pattern ignores case.
Files and directories both match (directories end with ``/``); the tree is walked by
:mod:`~pi_context.tools.file_walk` (hidden entries in, ``.git`` out, ignore files honoured). At
most ``limit`` paths (default 1000) and 50 KB are returned, with a bracketed note when cut.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from pi_context.errors import ToolError
from pi_context.tools.base import (
    ABORTED_TEXT,
    ContextTool,
    ToolContext,
    ToolOutcome,
    error_outcome,
    resolve_path,
    text_outcome,
)
from pi_context.tools.listing import Listing, effective_limit, in_thread, path_argument, was_aborted
from pi_context.tools.truncate import DEFAULT_MAX_BYTES

__all__ = ["DEFAULT_FIND_LIMIT", "FindTool", "glob_regex"]

DEFAULT_FIND_LIMIT: Final = 1000
_LEADING_DOT_SLASH: Final = re.compile(r"^(?:\./)+")


def glob_regex(pattern: str, *, ignore_case: bool = False) -> re.Pattern[str]:
    """A glob as a regular expression over ``/``-separated paths (whole-text match)."""
    out: list[str] = []
    depth = 0
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if ch == "*":
            if pattern.startswith("**", i):
                before = pattern[i - 1] if i > 0 else "/"
                after = pattern[i + 2] if i + 2 < n else ""
                if before == "/" and after == "/":
                    out.append("(?:.*/)?")
                    i += 3
                    continue
                if before == "/" and after == "":
                    out.append(".*")
                    i += 2
                    continue
                out.append("[^/]*")
                i += 2
                continue
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end == -1:
                out.append(re.escape(ch))
            else:
                body = pattern[i + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end + 1
                continue
        elif ch == "{":
            depth += 1
            out.append("(?:")
        elif ch == "}" and depth:
            depth -= 1
            out.append(")")
        elif ch == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(ch))
        i += 1
    out.append(")" * depth)
    try:
        return re.compile("".join(out), re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolError(f"Invalid glob pattern {pattern!r}: {exc}") from exc


class FindTool(ContextTool):
    """Find files and directories by glob, honouring ignore files."""

    name = "find"
    description = (
        "Find files by glob pattern; the paths come back relative to the searched directory. "
        ".gitignore rules apply. At most "
        f"{DEFAULT_FIND_LIMIT} paths or {DEFAULT_MAX_BYTES // 1024}KB are returned, whichever "
        "limit comes first."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012 - class-level schema, never mutated
        "type": "object",
        "required": ["pattern"],
        "properties": {
            "pattern": {
                "type": "string",
                "description": (
                    "Glob relative to the searched directory, such as 'src/**/*.py'; "
                    "a pattern without '/', such as '*.py', matches names at any depth"
                ),
            },
            "path": {
                "type": "string",
                "description": "Directory to search (default: the current directory)",
            },
            "limit": {
                "type": "number",
                "description": f"Most paths to return (default: {DEFAULT_FIND_LIMIT})",
            },
        },
    }
    prompt_snippet = "Find files by glob pattern (.gitignore respected)"

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        if ctx.aborted:
            return error_outcome(ABORTED_TEXT)
        root = resolve_path(path_argument(arguments), ctx.cwd)
        limit = effective_limit(arguments.get("limit"), DEFAULT_FIND_LIMIT)
        pattern = _LEADING_DOT_SLASH.sub("", str(arguments["pattern"]))
        if not root.exists():
            raise ToolError(f"Path not found: {root}")
        if not root.is_dir():
            raise ToolError(f"Not a directory: {root}")
        whole_path = "/" in pattern
        absolute = pattern.startswith("/")
        matcher = glob_regex(pattern, ignore_case=pattern == pattern.lower())

        def work(stop: Callable[[], bool]) -> tuple[list[str], bool]:
            from pi_context.tools.file_walk import walk  # loads only when a call runs

            found: list[str] = []
            for entry in walk(root, stop=stop):
                if whole_path:
                    subject = str(entry.path) if absolute else entry.relative
                else:
                    subject = entry.path.name
                if matcher.fullmatch(subject) is None:
                    continue
                if len(found) == limit:
                    return found, True
                found.append(entry.relative + "/" if entry.is_dir else entry.relative)
            return found, False

        found, cut = await in_thread(work, ctx)
        if was_aborted(ctx):
            return error_outcome(ABORTED_TEXT)
        if not found:
            return text_outcome("No files found matching pattern")
        listing = Listing()
        for line in found:
            listing.add(line)
        note = (
            (
                f"{limit} results limit reached. Use limit={limit * 2} for more, or refine pattern",
                "resultLimitReached",
                limit,
            )
            if cut
            else None
        )
        return listing.outcome(note)
