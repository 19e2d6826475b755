"""The ``write`` tool: create or overwrite a file with exactly the given text."""

from __future__ import annotations

from typing import Any

from pi_context.tools.base import (
    ABORTED_TEXT,
    CONSTRAINED_SAMPLING,
    ContextTool,
    PathLocks,
    ToolContext,
    ToolOutcome,
    error_outcome,
    resolve_path,
    text_outcome,
    utf8_bytes,
)

__all__ = ["WriteTool"]


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
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(utf8_bytes(content))
        return text_outcome(f"Successfully wrote to {raw_path}")
