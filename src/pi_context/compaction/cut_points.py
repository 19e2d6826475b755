"""Where a compaction cuts the conversation: pi's ``findCutPoint`` and its projected variant.

A *cut point* is an entry the kept range may start at: one whose messages include a user,
assistant, bash, custom, branch-summary or compaction-summary message, never a tool result (it
must follow its call) and never a system message; compaction entries are never cut points. A
*turn start* is the same minus ``assistant``. Walking back from the newest entry, tokens are
summed until ``keep_recent_tokens`` is reached; the cut is the first cut point at or after that
entry (else the last one). Metadata directly before the cut is pulled into the kept range. When
the cut is not a turn start, the turn it splits starts at the nearest earlier turn start.

Both variants work on *items*: anything with ``.entry`` (a session :class:`Entry`) and
``.messages`` (its context messages). The raw variant (:func:`find_cut_point`) pairs each path
entry with its unedited messages; the projected variant (:func:`find_projected_cut_point`,
what preparation uses) runs over the context-edited projection, where older compactions and
omitted entries have no messages, and applies pi's recovery-omission rule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from pi_context.session.entries import Entry

__all__ = [
    "CUT_POINT_ROLES",
    "TURN_START_ROLES",
    "CutPoint",
    "EntryItem",
    "find_cut_point",
    "find_projected_cut_point",
    "find_turn_start_index",
    "is_cut_point",
    "is_turn_start",
]

CUT_POINT_ROLES: Final = frozenset(
    {"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)
TURN_START_ROLES: Final = frozenset(
    {"user", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)


class EntryItem(Protocol):
    """An entry with the messages it contributes (a projected entry, or a raw one)."""

    @property
    def entry(self) -> Entry: ...

    @property
    def messages(self) -> Sequence[Any]: ...


TokenFn = Callable[[EntryItem], int]


@dataclass(frozen=True, slots=True)
class CutPoint:
    """Index (into the items) of the first kept entry and, for a split turn, of its start."""

    first_kept_index: int
    turn_start_index: int
    is_split_turn: bool


def _has_role(item: EntryItem, roles: frozenset[str]) -> bool:
    if item.entry.type == "compaction":
        return False
    for message in item.messages:
        # messages are plain dicts; the ABC check is only the slow fallback
        if (type(message) is dict or isinstance(message, Mapping)) and message.get("role") in roles:
            return True
    return False


def is_cut_point(item: EntryItem) -> bool:
    """Whether the kept range may start at this item."""
    return _has_role(item, CUT_POINT_ROLES)


def is_turn_start(item: EntryItem) -> bool:
    """Whether a turn starts at this item (a cut point that is not an assistant reply)."""
    return _has_role(item, TURN_START_ROLES)


def find_turn_start_index(items: Sequence[EntryItem], index: int, start: int) -> int:
    """The nearest turn-start entry at or before ``index`` (down to ``start``), else -1."""
    for j in range(index, start - 1, -1):
        if is_turn_start(items[j]):
            return j
    return -1


def _first_cut_point(items: Sequence[EntryItem], start: int, end: int) -> int:
    for i in range(start, end):
        if is_cut_point(items[i]):
            return i
    return -1


def _last_cut_point(items: Sequence[EntryItem], start: int, end: int) -> int:
    for i in range(end - 1, start - 1, -1):
        if is_cut_point(items[i]):
            return i
    return -1


def _walk_budget(
    items: Sequence[EntryItem],
    start: int,
    end: int,
    keep_recent_tokens: int,
    tokens: TokenFn,
) -> tuple[int, bool]:
    """``(cut, exceeded)``; ``cut`` is -1 when the range holds no cut point at all.

    Cut points are found lazily around where the budget runs out, so the walk costs time
    proportional to the kept range, not to the whole range (pi lists every cut point first).
    """
    acc = 0
    for i in range(end - 1, start - 1, -1):
        t = tokens(items[i])
        if t == 0:
            continue
        acc += t
        if acc >= keep_recent_tokens:
            cut = _first_cut_point(items, i, end)
            if cut == -1:
                cut = _last_cut_point(items, start, i)
            return cut, cut != -1
    return _first_cut_point(items, start, end), False


def find_cut_point(
    items: Sequence[EntryItem],
    start: int,
    end: int,
    keep_recent_tokens: int,
    tokens: TokenFn,
) -> CutPoint:
    """pi's raw ``findCutPoint`` over path entries paired with their unedited messages."""
    return _find(items, start, end, keep_recent_tokens, tokens, None)


def find_projected_cut_point(
    items: Sequence[EntryItem],
    start: int,
    end: int,
    keep_recent_tokens: int,
    tokens: TokenFn,
    intrinsically_visible: Callable[[Entry], bool],
    *,
    keep_tool_pairs: bool = False,
) -> CutPoint:
    """The cut point over projected entries, as ``prepareCompaction`` computes it.

    ``intrinsically_visible(entry)`` tells whether the raw entry would produce context
    messages without any edit (context edits themselves never are); an intrinsically visible
    entry without projected messages was omitted by a ``context_edit``. ``keep_tool_pairs``
    moves the cut back so that no kept tool result loses its call (not pi's rule; for
    histories recorded from agent frameworks).
    """
    return _find(
        items, start, end, keep_recent_tokens, tokens, intrinsically_visible, keep_tool_pairs
    )


def _find(
    items: Sequence[EntryItem],
    start: int,
    end: int,
    keep_recent_tokens: int,
    tokens: TokenFn,
    intrinsically_visible: Callable[[Entry], bool] | None,
    keep_tool_pairs: bool = False,
) -> CutPoint:
    """Both variants; the recovery-omission rule applies only with ``intrinsically_visible``."""
    cut, exceeded = _walk_budget(items, start, end, keep_recent_tokens, tokens)
    if cut == -1:
        return CutPoint(start, -1, False)
    if (
        exceeded
        and intrinsically_visible is not None
        and _recovery_omission_applies(items, cut, end, intrinsically_visible)
    ):
        cut += 1
    if keep_tool_pairs:
        cut = _keep_calls_of_kept_results(items, start, cut, end)
    # pull the metadata entries (no messages) right before the cut into the kept range
    while cut > start:
        prev = items[cut - 1]
        if prev.entry.type == "compaction" or prev.messages:
            break
        cut -= 1
    if is_turn_start(items[cut]):
        return CutPoint(cut, -1, False)
    turn_start = find_turn_start_index(items, cut, start)
    return CutPoint(cut, turn_start, turn_start != -1)


def _ids(item: EntryItem, role: str) -> set[str]:
    """Call ids of the item's tool results (``toolResult``) or tool calls (``assistant``)."""
    out: set[str] = set()
    for message in item.messages:
        if not isinstance(message, Mapping) or message.get("role") != role:
            continue
        if role == "toolResult":
            out.add(str(message.get("toolCallId")))
            continue
        content = message.get("content")
        if isinstance(content, list):
            out.update(
                str(b.get("id"))
                for b in content
                if isinstance(b, Mapping) and b.get("type") == "toolCall"
            )
    return out


def _keep_calls_of_kept_results(items: Sequence[EntryItem], start: int, cut: int, end: int) -> int:
    """``cut``, moved back so that no kept tool result loses its call to the summary.

    pi's agent puts a call's results right after its assistant message, where a cut never
    separates them, and pi's cut does not look further. Histories recorded from agent
    frameworks may not: parallel calls split over
    several assistant messages (``[AI(a), AI(b), Tool(a), Tool(b)]``) put a result after a later
    cut point, and a cut there would keep the result without its call.
    """
    while cut > start:
        results: set[str] = set()
        calls: set[str] = set()
        for item in items[cut:end]:
            results |= _ids(item, "toolResult")
            calls |= _ids(item, "assistant")
        missing = results - calls
        if not missing:
            return cut
        for index in range(cut - 1, start - 1, -1):
            if _ids(items[index], "assistant") & missing:
                cut = index
                break
        else:
            return cut  # the calls are older than the range: nothing to keep them with
    return cut


def _recovery_omission_applies(
    items: Sequence[EntryItem],
    cut: int,
    end: int,
    intrinsically_visible: Callable[[Entry], bool],
) -> bool:
    """True when everything after the cut is an omitted failed attempt plus edits/metadata."""
    suffix = items[cut + 1 : end]
    if not suffix:
        return False
    omitted_ids: set[str] = set()
    omitted_assistant = False
    for item in suffix:
        entry = item.entry
        if entry.type == "compaction":
            return False
        visible = entry.type != "context_edit" and intrinsically_visible(entry)
        if visible and item.messages:
            return False
        if visible:
            omitted_ids.add(entry.id)
            if entry.type == "message" and entry.role == "assistant":
                omitted_assistant = True
    if not omitted_assistant:
        return False
    for item in suffix:
        entry = item.entry
        if entry.type == "context_edit":
            replacement = entry.get("replacement")
            if replacement is not None and entry.get("targetId") not in omitted_ids:
                return False
    return True
