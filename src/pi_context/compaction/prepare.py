"""What a compaction summarizes and what it keeps (pi's ``prepareCompaction``).

Preparation works on the projection of the current path (context edits applied, only the
newest compaction contributing). Summarization starts at the previous compaction's kept
boundary, not at the compaction entry, so the messages that survived the last compaction are
summarized now, together with the previous summary (the *update* prompt). A split turn is
summarized in two parts: the history before the turn, and the turn's prefix.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from pi_context.compaction.accounting import TokenCache, estimate_projected_context_tokens
from pi_context.compaction.cut_points import CutPoint, TokenFn, find_projected_cut_point
from pi_context.compaction.file_ops import FileOperations
from pi_context.compaction.serialize import serialize_conversation
from pi_context.errors import CompactionError
from pi_context.messages import AgentMessage
from pi_context.resources.settings import CompactionSettings
from pi_context.session.entries import Entry
from pi_context.session.projection import (
    ProjectedEntry,
    Projection,
    convert_to_llm,
    projection_of_path,
)

__all__ = [
    "ALREADY_COMPACTED",
    "NOTHING_TO_COMPACT",
    "CompactionPreparation",
    "intrinsically_visible",
    "prepare_compaction",
    "require_preparation",
]

_entry_key = operator.attrgetter("key")

ALREADY_COMPACTED = "Already compacted"
NOTHING_TO_COMPACT = "Nothing to compact (session too small)"


@dataclass
class CompactionPreparation:
    """Everything a summarizer needs, and what the compaction entry will record."""

    first_kept_entry_id: str
    first_kept_path_index: int
    messages_to_summarize: list[AgentMessage]
    turn_prefix_messages: list[AgentMessage]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOperations
    settings: CompactionSettings
    summarize_entry_ids: list[str] = field(default_factory=list)
    """Source entry of each message to summarize (for reports; same order)."""
    turn_prefix_entry_ids: list[str] = field(default_factory=list)
    previous_compaction: Entry | None = None
    cut: CutPoint | None = None

    @property
    def read_files(self) -> list[str]:
        return self.file_ops.lists()[0]

    @property
    def modified_files(self) -> list[str]:
        return self.file_ops.lists()[1]

    def serialized_history(self) -> str:
        return serialize_conversation(convert_to_llm(self.messages_to_summarize))

    def serialized_turn_prefix(self) -> str:
        return serialize_conversation(convert_to_llm(self.turn_prefix_messages))


def intrinsically_visible(entry: Entry) -> bool:
    """Whether the raw entry produces context messages (before any context edit)."""
    kind = entry.type
    if kind in ("message", "custom_message", "compaction"):
        return True
    if kind == "branch_summary":
        return bool(entry.get("summary"))
    return False


def _collect(
    items: Sequence[ProjectedEntry],
    start: int,
    end: int,
    ops: FileOperations,
    cache: TokenCache,
) -> tuple[list[AgentMessage], list[str]]:
    """Non-system messages of ``items[start:end]`` (compactions skipped), recording file ops."""
    messages: list[AgentMessage] = []
    ids: list[str] = []
    targets = {"read": ops.read, "write": ops.written, "edit": ops.edited}
    for index in range(start, end):
        item = items[index]
        item_messages = item.messages
        if not item_messages:
            continue
        entry = item.entry
        if entry.type == "compaction":
            continue
        for message in item_messages:
            if message.get("role") != "system":
                messages.append(message)
                ids.append(entry.id)
        for tool, path in cache.item_file_ops(item):
            targets[tool][path] = None
    return messages, ids


class _History:
    """Messages, source ids and file ops of a summarized range, reusable by the next call.

    Preparations on a growing session summarize the same projected entries again plus a few
    new ones; when the entries already collected are still the same (the same entry keys: no
    edit replaced them; the same previous compaction), only the new ones are visited.
    """

    __slots__ = ("ids", "items", "messages", "ops", "previous")

    def __init__(self, previous: Entry | None, ops: FileOperations) -> None:
        self.previous = previous
        self.ops = ops
        self.items: list[ProjectedEntry] = []
        self.messages: list[AgentMessage] = []
        self.ids: list[str] = []

    def reusable(
        self, items: Sequence[ProjectedEntry], start: int, end: int, previous: Entry | None
    ) -> bool:
        n = len(self.items)
        if previous is not self.previous or start + n > end:
            return False
        if all(map(operator.is_, itertools.islice(items, start, start + n), self.items)):
            return True
        return all(
            map(
                operator.eq,
                map(_entry_key, itertools.islice(items, start, start + n)),
                map(_entry_key, self.items),
            )
        )

    def extend(
        self, items: Sequence[ProjectedEntry], start: int, end: int, cache: TokenCache
    ) -> None:
        lo = start + len(self.items)
        messages, ids = _collect(items, lo, end, self.ops, cache)
        self.items.extend(itertools.islice(items, lo, end))
        self.messages.extend(messages)
        self.ids.extend(ids)


def _history(
    items: Sequence[ProjectedEntry],
    start: int,
    end: int,
    previous: Entry | None,
    cache: TokenCache,
) -> _History:
    memo = cache.history
    if not isinstance(memo, _History) or not memo.reusable(items, start, end, previous):
        ops = FileOperations()
        if previous is not None and not previous.get("fromHook"):
            ops.seed(previous.get("details"))
        memo = _History(previous, ops)
        cache.history = memo
    memo.extend(items, start, end, cache)
    return memo


def _prepare(
    path_entries: Sequence[Entry],
    settings: CompactionSettings,
    projection: Projection | None,
    cache: TokenCache | None,
) -> CompactionPreparation | str:
    if not path_entries:
        return NOTHING_TO_COMPACT
    if path_entries[-1].type == "compaction":
        return ALREADY_COMPACTED
    if projection is None:
        projection = projection_of_path(path_entries)
    cache = cache or TokenCache()
    items: Sequence[ProjectedEntry] = projection.entries
    boundary = 0
    previous_summary: str | None = None
    previous: Entry | None = None
    for index, item in enumerate(items):
        if item.entry.type == "compaction" and item.messages:
            previous = item.entry
            summary = previous.get("summary")
            previous_summary = summary if isinstance(summary, str) else ""
            boundary = index + 1
            break
    tokens_before = estimate_projected_context_tokens(projection, path_entries, cache).tokens
    cut = find_projected_cut_point(
        items,
        boundary,
        len(items),
        settings.keep_recent_tokens,
        cast(TokenFn, cache.item_tokens),  # the items are projected entries, which have keys
        intrinsically_visible,
        keep_tool_pairs=settings.keep_tool_pairs,
    )
    if cut.first_kept_index >= len(items):
        return NOTHING_TO_COMPACT
    first_kept = items[cut.first_kept_index].entry
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
    history = _history(items, boundary, history_end, previous, cache)
    ops = history.ops.copy()
    to_summarize = list(history.messages)
    summarize_ids = list(history.ids)
    prefix: list[AgentMessage] = []
    prefix_ids: list[str] = []
    if cut.is_split_turn:
        prefix, prefix_ids = _collect(items, cut.turn_start_index, cut.first_kept_index, ops, cache)
    if not to_summarize and not prefix:
        return NOTHING_TO_COMPACT
    path_index = next(
        (i for i in range(len(path_entries) - 1, -1, -1) if path_entries[i] is first_kept),
        -1,
    )
    if path_index == -1:
        path_index = next((i for i, e in enumerate(path_entries) if e.id == first_kept.id), -1)
    return CompactionPreparation(
        first_kept_entry_id=first_kept.id,
        first_kept_path_index=path_index,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        previous_summary=previous_summary,
        file_ops=ops,
        settings=settings,
        summarize_entry_ids=summarize_ids,
        turn_prefix_entry_ids=prefix_ids,
        previous_compaction=previous,
        cut=cut,
    )


def prepare_compaction(
    path_entries: Sequence[Entry],
    settings: CompactionSettings | None = None,
    *,
    projection: Projection | None = None,
    cache: TokenCache | None = None,
) -> CompactionPreparation | None:
    """Prepare a compaction of the path ``root → leaf``; ``None`` when there is nothing to do.

    ``projection`` may pass an already built projection of the same path (it is rebuilt
    otherwise); ``cache`` reuses per-entry token estimates across calls.
    """
    result = _prepare(path_entries, settings or CompactionSettings(), projection, cache)
    return None if isinstance(result, str) else result


def require_preparation(
    path_entries: Sequence[Entry],
    settings: CompactionSettings | None = None,
    *,
    projection: Projection | None = None,
    cache: TokenCache | None = None,
) -> CompactionPreparation:
    """Like :func:`prepare_compaction` but raises pi's manual-compaction errors."""
    result = _prepare(path_entries, settings or CompactionSettings(), projection, cache)
    if isinstance(result, str):
        raise CompactionError(result)
    return result
