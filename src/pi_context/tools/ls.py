"""The ``ls`` tool: one directory's entries, dotfiles included.

Entries are sorted case-insensitively, a directory (or a link to one) gets a trailing ``/``, an
entry that cannot be examined (a dangling link) is left out. At most ``limit`` entries (default
500) and 50 KB are returned; a bracketed note says which limit cut the listing.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import Any, Final

from pi_context.errors import ToolError
from pi_context.tools.base import (
    ABORTED_TEXT,
    ContextTool,
    ToolContext,
    ToolOutcome,
    error_outcome,
    os_error_message,
    resolve_path,
    text_outcome,
)
from pi_context.tools.listing import Listing, effective_limit, in_thread, path_argument, was_aborted
from pi_context.tools.truncate import DEFAULT_MAX_BYTES

__all__ = ["DEFAULT_LS_LIMIT", "LsTool"]

DEFAULT_LS_LIMIT: Final = 500


class LsTool(ContextTool):
    """List a directory's entries, sorted, directories marked with ``/``."""

    name = "ls"
    description = (
        "List the entries of a directory, dotfiles included, sorted alphabetically; directory "
        f"names end with '/'. At most {DEFAULT_LS_LIMIT} entries or "
        f"{DEFAULT_MAX_BYTES // 1024}KB are returned, whichever limit comes first."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012 - class-level schema, never mutated
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "Directory to list (default: the current directory)",
            },
            "limit": {
                "type": "number",
                "description": f"Most entries to return (default: {DEFAULT_LS_LIMIT})",
            },
        },
    }
    prompt_snippet = "List a directory's contents"

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        if ctx.aborted:
            return error_outcome(ABORTED_TEXT)
        directory = resolve_path(path_argument(arguments), ctx.cwd)
        limit = effective_limit(arguments.get("limit"), DEFAULT_LS_LIMIT)
        if not os.path.lexists(directory):
            raise ToolError(f"Path not found: {directory}")
        if not directory.is_dir():
            raise ToolError(f"Not a directory: {directory}")

        def work(stop: Callable[[], bool]) -> tuple[list[str], bool]:
            try:
                names = os.listdir(directory)
            except OSError as exc:
                raise ToolError(
                    f"Cannot read directory: {os_error_message(exc, 'scandir')}"
                ) from exc
            names.sort(key=str.lower)
            shown: list[str] = []
            for name in names:
                if len(shown) >= limit:
                    return shown, True
                if stop():
                    break
                try:
                    mode = os.stat(directory / name).st_mode
                except OSError:
                    continue  # cannot be examined (a dangling link)
                shown.append(name + "/" if stat.S_ISDIR(mode) else name)
            return shown, False

        shown, cut = await in_thread(work, ctx)
        if was_aborted(ctx):
            return error_outcome(ABORTED_TEXT)
        if not shown:
            return text_outcome("(empty directory)")
        listing = Listing()
        for line in shown:
            listing.add(line)
        note = (
            (
                f"{limit} entries limit reached. Use limit={limit * 2} for more",
                "entryLimitReached",
                limit,
            )
            if cut
            else None
        )
        return listing.outcome(note)
