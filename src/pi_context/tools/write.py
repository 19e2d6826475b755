"""The ``write`` tool: create or overwrite a file with exactly the given text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_context.tools.base import (
    CONSTRAINED_SAMPLING,
    AbortSignal,
    PathLocks,
    Tool,
    ToolOutcome,
    UpdateCallback,
    error_outcome,
    resolve_path,
    text_outcome,
    utf8_bytes,
)

__all__ = ["WriteTool"]


class WriteTool(Tool):
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

    async def execute(
        self,
        call_id: str,
        arguments: dict[str, Any],
        *,
        cwd: Path,
        signal: AbortSignal | None = None,
        on_update: UpdateCallback | None = None,
    ) -> ToolOutcome:
        raw_path: str = arguments["path"]
        content: str = arguments["content"]
        path = resolve_path(raw_path, cwd)
        async with self.locks.lock(path):
            if signal is not None and signal.is_set():
                return error_outcome("Operation aborted")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(utf8_bytes(content))
        return text_outcome(f"Successfully wrote to {raw_path}")
