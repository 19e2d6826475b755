"""The summary guard: reject a summary that would not help.

A summary is rejected (as a compaction failure, nothing appended) when it says nothing (a
summarizer that answered with an empty text: the file lists alone would replace the whole
history), when the context it leaves would not be smaller than the context before, or when it
lost any of the read/modified file names the preparation tracked. Repeated failures pause automatic compaction (see
:class:`~pi_context.compaction.engine.Compactor`).
"""

from __future__ import annotations

from collections.abc import Sequence

from pi_context.compaction.file_ops import format_file_operations

__all__ = ["check_summary"]


def check_summary(
    summary: str,
    *,
    tokens_before: int | None,
    tokens_after: int,
    read_files: Sequence[str],
    modified_files: Sequence[str],
) -> str | None:
    """The reason to reject ``summary``, or ``None`` when it passes."""
    body = summary.removesuffix(format_file_operations(read_files, modified_files))
    if not body.strip():
        return "the summarizer returned an empty summary"
    if tokens_before is not None and tokens_before > 0 and tokens_after >= tokens_before:
        return (
            "summary would not shrink the context "
            f"({tokens_before} tokens before, about {tokens_after} after)"
        )
    missing = [path for path in (*read_files, *modified_files) if path not in summary]
    if missing:
        shown = ", ".join(missing[:3]) + (" …" if len(missing) > 3 else "")
        return f"summary dropped tracked files from its file lists ({shown})"
    return None
