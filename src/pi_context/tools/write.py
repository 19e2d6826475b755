"""The ``write`` tool: create or overwrite a file with exactly the given text.

Only regular files are written: a FIFO, a device or a socket at the path is a tool error (pi
blocks on a FIFO until a reader comes). A path written inside the working directory that a
symbolic link leads outside it is refused; the model may write the link's target by name.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pi_context._keywords import keyword_checked
from pi_context.errors import ToolError
from pi_context.tools.base import (
    ABORTED_TEXT,
    CONSTRAINED_SAMPLING,
    ContextTool,
    PathLocks,
    ToolContext,
    ToolOutcome,
    error_outcome,
    os_error_message,
    resolve_path,
    text_outcome,
    utf8_bytes,
)
from pi_context.tools.file_access import (
    link_escape,
    link_escape_message,
    refuse_nul,
    write_regular,
)

__all__ = ["WriteTool"]


@keyword_checked
class WriteTool(ContextTool):
    """Write ``content`` to ``path`` as UTF-8, creating parent directories; nothing is added."""

    name = "write"
    description = (
        "Write a file, creating it (and any missing parent directories) or replacing its whole "
        "content. The content is written exactly as given."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012 - class-level schema, never mutated
        "type": "object",
        "required": ["path", "content"],
        "properties": {
            "path": {
                "type": "string",
                "description": "File to write, relative to the cwd or absolute",
            },
            "content": {"type": "string", "description": "The complete new content of the file"},
        },
    }
    prompt_snippet = "Create a file or replace its whole content"
    prompt_guidelines = (
        "Use write only for new files or complete rewrites; use edit for changes.",
    )
    constrained_sampling = CONSTRAINED_SAMPLING

    def __init__(self, *, locks: PathLocks | None = None) -> None:
        self.locks = locks if locks is not None else PathLocks()

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        raw_path: str = arguments["path"]
        content: str = arguments["content"]
        path = resolve_path(raw_path, ctx.cwd)
        async with self.locks.lock(path):
            if ctx.aborted:
                return error_outcome(ABORTED_TEXT)
            refuse_nul(path, "write", raw_path)
            target = link_escape(path, ctx.cwd)
            if target is not None:
                raise ToolError(link_escape_message("write", raw_path, target))
            _make_parents(path)
            try:
                write_regular(path, utf8_bytes(content), action="write", shown=raw_path)
            except IsADirectoryError as exc:
                raise ToolError(os_error_message(exc, "open")) from exc
        return text_outcome(f"Successfully wrote to {raw_path}")


def _make_parents(path: Path) -> None:
    """``mkdir -p`` of the parent; a file in the way is ``ENOTDIR``, worded as Node does."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as exc:
        blocker = next(
            (p for p in (path.parent, *path.parent.parents) if p.exists() and not p.is_dir()),
            path.parent,
        )
        error = NotADirectoryError(20, os.strerror(20), str(blocker))
        raise ToolError(os_error_message(error, "mkdir")) from exc
