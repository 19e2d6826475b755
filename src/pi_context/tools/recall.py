"""The ``recall`` tool: the model searches what left its context, and gets it back verbatim.

A compaction replaces early turns by a summary, masking replaces old tool output by a
placeholder, and a branch summary stands for a branch the user left; the originals stay in
the session file. ``recall`` searches them (:meth:`Session.search
<pi_context.session.Session.search>` with ``only_replaced``) and returns each hit's whole text
as it was written (the user's words, the assistant's text, thinking and tool calls, tool
output), so a detail the summary dropped (a number, an error message, a decision) is one call
away instead of lost or re-derived.

Output is bounded like ``read``'s: each entry is cut at :data:`ENTRY_MAX_BYTES` and the whole
result at 2000 lines / 50 KB, with a note saying what was cut.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from pi_context.errors import SessionError, ToolError
from pi_context.session.store import Session
from pi_context.tools.base import (
    CONSTRAINED_SAMPLING,
    ContextTool,
    ToolContext,
    ToolOutcome,
    text_outcome,
    utf8_bytes,
)
from pi_context.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    format_size,
    truncate_head,
)

if TYPE_CHECKING:
    from pi_context.session.search.query import SearchHit

__all__ = ["DEFAULT_RECALL_LIMIT", "ENTRY_MAX_BYTES", "MAX_RECALL_LIMIT", "RecallTool"]

DEFAULT_RECALL_LIMIT: Final = 5
MAX_RECALL_LIMIT: Final = 20
ENTRY_MAX_BYTES: Final = 12 * 1024
"""The most of one entry's text a result shows (a long tool output is cut to its head)."""

_REPLACER_WORDS: Final = {
    "compaction": "summarized by compaction",
    "branch_summary": "summarized with a branch the user left",
    "context_edit": "hidden or shortened by a context edit",
}


class RecallTool(ContextTool):
    """Search the session's replaced history; ``session`` gives the session at call time."""

    name = "recall"
    description = (
        "Search this conversation's earlier history that is no longer in your context "
        "(turns condensed into a summary, tool output that was masked, branches the user left) "
        "and get the matching entries back word for word. Give a few distinctive keywords: "
        "file names, identifiers, error text, numbers. Results are ranked, best first, and "
        f"cut at {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012 - class-level schema, never mutated
        "type": "object",
        "required": ["query"],
        "properties": {
            "query": {
                "type": "string",
                "description": "Keywords to look for (plain words; a path or name matches as a whole)",
            },
            "limit": {
                "type": "number",
                "description": f"How many entries to return at most (default "
                f"{DEFAULT_RECALL_LIMIT}, at most {MAX_RECALL_LIMIT})",
            },
        },
    }
    prompt_snippet = "Search earlier turns that were summarized away and get them back verbatim"
    prompt_guidelines = (
        "When a detail you need came up earlier but is not in your context any more (only a "
        "summary mentions it, or a tool output was masked), use recall with distinctive "
        "keywords before asking the user or redoing the work.",
    )
    constrained_sampling = CONSTRAINED_SAMPLING

    def __init__(
        self,
        session: Callable[[], Session],
        *,
        all_branches: bool = True,
        cache_dir: str | None = None,
        offer: str = "auto",
    ) -> None:
        self.offer = offer
        """When an agent offers the tool: ``auto`` (once the branch holds a compaction, so a
        session without one sends pi's prompt and tools unchanged) or ``always``."""
        self._session = session
        self._all_branches = all_branches
        self._cache_dir = cache_dir

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ToolError("query must name what to look for")
        limit = _limit(arguments.get("limit"))
        session = self._session()
        from pi_context.session.search.query import (
            entry_texts,  # the index loads with the first search
        )

        try:
            hits = session.search(
                query,
                limit=limit,
                all_branches=self._all_branches,
                only_replaced=True,
                cache_dir=self._cache_dir,
            )
            texts = entry_texts(session.search_index(self._cache_dir), [h.id for h in hits])
        except SessionError as exc:
            raise ToolError(f"cannot search this session: {exc}") from exc
        if not hits:
            return text_outcome(
                f"Nothing outside your context matches {query!r}. Everything still in your "
                "context is not searched; try other keywords.",
                details={"hits": []},
            )
        return _result(query, hits, texts, session)


def _limit(value: Any) -> int:
    if value is None:
        return DEFAULT_RECALL_LIMIT
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise ToolError("limit must be a number")
    return max(1, min(MAX_RECALL_LIMIT, int(value)))


def _replaced_words(hit: SearchHit, session: Session) -> str:
    if hit.replaced_by is None:
        return "on a branch the user left"
    replacer = session.get(hit.replaced_by)
    kind = replacer.type if replacer is not None else ""
    return f"{_REPLACER_WORDS.get(kind, 'replaced')} ({hit.replaced_by})"


def _cut_entry(text: str) -> str:
    data = utf8_bytes(text)
    if len(data) <= ENTRY_MAX_BYTES:
        return text
    head = data[:ENTRY_MAX_BYTES].decode("utf-8", "ignore")
    rest = len(data) - len(utf8_bytes(head))
    return f"{head}\n[… {format_size(rest)} more of this entry not shown]"


def _result(
    query: str, hits: list[SearchHit], texts: dict[str, str] | Any, session: Session
) -> ToolOutcome:
    parts = [f"{len(hits)} earlier {'entry' if len(hits) == 1 else 'entries'} match {query!r}:"]
    for hit in hits:
        when = f", {hit.timestamp}" if hit.timestamp else ""
        heading = f"--- entry {hit.id} ({hit.role}{when}; {_replaced_words(hit, session)}) ---"
        parts.append(f"{heading}\n{_cut_entry(texts.get(hit.id, hit.snippet))}")
    text = "\n\n".join(parts)
    truncation = truncate_head(text)
    details: dict[str, Any] = {"hits": [h.to_json() for h in hits]}
    shown = truncation.content
    if truncation.truncated:
        details["truncation"] = truncation.to_json()
        shown += (
            f"\n\n[Result cut at {format_size(DEFAULT_MAX_BYTES)} / {DEFAULT_MAX_LINES} lines; "
            "ask for fewer entries (limit) or use more specific keywords.]"
        )
    return text_outcome(shown, details=details)
