"""Observation masking: hide old tool output behind a short placeholder, reversibly.

Tool results older than the last ``keep_turns`` turns are replaced in the projection by a
one-line placeholder. The replacement is a ``context_edit`` entry, so the raw result stays in
the session file and :func:`restore_observations` can bring it back with another edit. Old tool
output is usually what fills a coding agent's window, and masking it is much cheaper than a
summary, so summaries are needed far less often.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from pi_context.compaction.cut_points import is_turn_start
from pi_context.messages import text_of
from pi_context.session.entries import Entry
from pi_context.session.projection import ProjectedEntry
from pi_context.session.store import Session
from pi_context.tokens import estimate_tokens

__all__ = [
    "MASK_MARKER",
    "MaskCandidate",
    "find_maskable",
    "is_masked",
    "mask_observations",
    "placeholder_for",
    "restore_observations",
]

MASK_MARKER: Final = "[Tool output masked to save context"


@dataclass(frozen=True, slots=True)
class MaskCandidate:
    """A tool result worth masking: its entry, tool, text length and current token estimate."""

    entry: Entry
    tool_name: str
    chars: int
    tokens: int


def placeholder_for(tool_name: str, chars: int) -> str:
    """The placeholder text that stands in for a masked result."""
    return (
        f"{MASK_MARKER}: {tool_name}, {chars} characters. "
        "The full result is kept in the session file.]"
    )


def is_masked(message: Any) -> bool:
    """Whether a projected tool result is a masking placeholder."""
    return text_of(message.get("content")).startswith(MASK_MARKER)


def find_maskable(
    items: Sequence[ProjectedEntry], keep_turns: int, *, min_saving_tokens: int = 50
) -> list[MaskCandidate]:
    """Unedited tool results before the last ``keep_turns`` turns that are worth masking."""
    starts = [i for i, item in enumerate(items) if is_turn_start(item)]
    if len(starts) <= keep_turns:
        return []
    boundary = starts[len(starts) - keep_turns] if keep_turns > 0 else len(items)
    out: list[MaskCandidate] = []
    for item in items[:boundary]:
        entry = item.entry
        if entry.type != "message" or entry.role != "toolResult" or len(item.messages) != 1:
            continue
        message = cast(Mapping[str, Any], item.messages[0])
        if message is not entry.message:
            continue  # already edited (masked, replaced or omitted)
        content: Any = message.get("content")
        text = text_of(content)
        name = str(message.get("toolName", "tool"))
        tokens = estimate_tokens(message)
        placeholder_tokens = len(placeholder_for(name, len(text))) // 4 + 1
        if tokens - placeholder_tokens >= min_saving_tokens:
            out.append(MaskCandidate(entry, name, len(text), tokens))
    return out


def mask_observations(
    session: Session, keep_turns: int, *, min_saving_tokens: int = 50
) -> list[Entry]:
    """Append a masking ``context_edit`` for every maskable tool result; return the edits."""
    projection = session.stored_projection()
    edits: list[Entry] = []
    for candidate in find_maskable(
        projection.entries, keep_turns, min_saving_tokens=min_saving_tokens
    ):
        content = [{"type": "text", "text": placeholder_for(candidate.tool_name, candidate.chars)}]
        edits.append(session.append_context_edit(candidate.entry.id, {"content": content}))
    return edits


def restore_observations(session: Session, target_ids: Sequence[str] | None = None) -> list[Entry]:
    """Undo masking (of ``target_ids``, or of every masked result in the current context)."""
    projection = session.stored_projection()
    wanted = set(target_ids) if target_ids is not None else None
    edits: list[Entry] = []
    for item in projection.entries:
        entry = item.entry
        if entry.type != "message" or entry.role != "toolResult" or not item.messages:
            continue
        if wanted is not None and entry.id not in wanted:
            continue
        if not is_masked(item.messages[0]):
            continue
        original = entry.message
        if original is None:
            continue
        edits.append(session.append_context_edit(entry.id, {"content": original.get("content")}))
    return edits
