"""The ``recall`` tool: the model searches what left its context, and gets it back verbatim.

A compaction replaces early turns by a summary, masking replaces old tool output by a
placeholder, and a branch summary stands for a branch the user left; the originals stay in
the session file. ``recall`` searches them (:meth:`Session.search
<pi_context.session.Session.search>` with ``only_replaced``) and returns each hit's whole text
as it was written (the user's words, the assistant's text, thinking and tool calls, tool
output), so a detail the summary dropped (a number, an error message, a decision) is one call
away instead of lost or re-derived.

A short entry comes back whole. A long one (more than :data:`WHOLE_ENTRY_LINES` lines or
:data:`WHOLE_ENTRY_BYTES` bytes: a test log, a file's content, an earlier summary) comes back as
its lines that hold a word of the query, each with :data:`EXCERPT_CONTEXT_LINES` lines either
side, word for word, and a note for each run of lines left out: the result stays in the context
for every later request until the next compaction, so a recall that finds a fact in a long
entry should not carry the whole entry along. Output is bounded like ``read``'s: each entry is
cut at :data:`ENTRY_MAX_BYTES` and the whole result at 2000 lines / 50 KB, with a note saying
what was cut.
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

__all__ = [
    "DEFAULT_RECALL_LIMIT",
    "ENTRY_MAX_BYTES",
    "EXCERPT_CONTEXT_LINES",
    "MAX_RECALL_LIMIT",
    "WHOLE_ENTRY_BYTES",
    "WHOLE_ENTRY_LINES",
    "RecallTool",
]

DEFAULT_RECALL_LIMIT: Final = 5
MAX_RECALL_LIMIT: Final = 20
ENTRY_MAX_BYTES: Final = 12 * 1024
"""The most of one entry's text a result shows (a long tool output is cut to its head)."""
WHOLE_ENTRY_LINES: Final = 24
WHOLE_ENTRY_BYTES: Final = 2 * 1024
"""An entry up to this many lines and bytes is shown whole; a longer one by its matching lines."""
EXCERPT_CONTEXT_LINES: Final = 2
"""Lines shown before and after each line of a long entry that holds a word of the query."""

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
        from pi_context.session.search.query import (  # the index loads with the first search
            entry_texts,
            query_terms,
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
        return _result(query, hits, texts, session, query_terms(query))


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


def _excerpt(text: str, terms: list[str]) -> str:
    """A long ``text`` as its lines holding a word of ``terms`` (or, if none does, a word's
    stem), each with :data:`EXCERPT_CONTEXT_LINES` lines around it, a note for each gap; a
    short one, or one where no line matches, as it is."""
    lines = text.split("\n")
    if len(lines) <= WHOLE_ENTRY_LINES and len(utf8_bytes(text)) <= WHOLE_ENTRY_BYTES:
        return text
    from pi_context.session.search.query import matching_lines

    matching = matching_lines(lines, terms)
    if not matching:
        return text
    shown = [False] * len(lines)
    for i in matching:
        for j in range(max(0, i - EXCERPT_CONTEXT_LINES), i + EXCERPT_CONTEXT_LINES + 1):
            if j < len(lines):
                shown[j] = True
    out: list[str] = []
    gap = 0
    for line, keep in zip(lines, shown, strict=True):
        if keep:
            if gap:
                out.append(_gap_note(gap))
                gap = 0
            out.append(line)
        else:
            gap += 1
    if gap:
        out.append(_gap_note(gap))
    return "\n".join(out)


def _gap_note(count: int) -> str:
    return f"[… {count} line{'' if count == 1 else 's'} without the query's words not shown]"


def _result(
    query: str,
    hits: list[SearchHit],
    texts: dict[str, str] | Any,
    session: Session,
    terms: list[str],
) -> ToolOutcome:
    parts = [f"{len(hits)} earlier {'entry' if len(hits) == 1 else 'entries'} match {query!r}:"]
    for hit in hits:
        when = f", {hit.timestamp}" if hit.timestamp else ""
        heading = f"--- entry {hit.id} ({hit.role}{when}; {_replaced_words(hit, session)}) ---"
        body = _excerpt(texts.get(hit.id, hit.snippet), terms)
        parts.append(f"{heading}\n{_cut_entry(body)}")
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
