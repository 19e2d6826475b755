"""Searching a session's whole history, including what the model no longer sees.

A session file is append-only: a compaction adds a summary and the id of the first entry it
kept, a branch summary records the branch it stands for, a context edit hides or rewrites one
entry, and every original stays in the file. :func:`search` ranks the entries' text (BM25 over
the index of :mod:`~pi_context.session.search.index`) and tells, for each hit, whether the
model still sees it and, if not, which entry took its place:

* on the branch, an entry before a compaction's first kept entry is replaced by the first such
  compaction after it (an older compaction by the next one, since only the newest speaks);
  a system message or an older compaction inside the kept range is replaced too;
* an entry a context edit omits or rewrites is replaced by that edit (masked tool output, for
  instance);
* off the branch (with ``all_branches``), an entry of a branch the user left is replaced by the
  branch summary written for it, if there is one.

The query is plain words: each whitespace-separated part is a term (a part like
``src/app.py`` or ``parse_config`` matches its words side by side), a hit needs one of them,
and entries holding more of them, or rarer ones, rank higher. Words (letters and digits,
Unicode-aware) are stemmed, so ``errors`` finds ``error``. No query syntax reaches SQLite.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pi_context.session.search.index import IndexedEntries, SearchIndex, StaleIndexError
from pi_context.session.search.text import SNIPPET_CHARS, entry_text

__all__ = [
    "LAST_ENTRY",
    "SNIPPET_CHARS",
    "SearchHit",
    "entry_texts",
    "make_snippet",
    "match_expression",
    "matching_lines",
    "query_phrases",
    "query_terms",
    "search",
]

MAX_TERMS: Final = 32
"""Words of a query used; the rest are ignored (a query is a few keywords, not a document)."""

_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")


class _Last:
    def __repr__(self) -> str:
        return "LAST_ENTRY"


LAST_ENTRY: Final = _Last()
"""As ``leaf_id``: the last entry of the file, the leaf a session file opens at."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One entry that matched a search."""

    id: str
    """The entry's id."""
    role: str
    """The role of the message it holds (``user``, ``assistant``, ``toolResult``,
    ``bashExecution``, ``custom``, ``compactionSummary``, ``branchSummary``, ``system``)."""
    timestamp: str | None
    """The entry's ISO-8601 timestamp as written."""
    snippet: str
    """Up to :data:`SNIPPET_CHARS` characters of its text around the first match, whitespace
    collapsed, ``…`` where cut. Raw text: escape it before it reaches a terminal."""
    score: float
    """BM25 relevance, higher is better; comparable only within one search."""
    replaced_by: str | None
    """The id of the compaction, branch summary or context edit that took this entry's place
    in the model's context, or ``None`` (on the branch: the model sees it as written)."""
    on_branch: bool
    """Whether the entry is on the branch searched (``False`` only with ``all_branches``)."""

    @property
    def in_context(self) -> bool:
        """Whether the model sees this entry as written at the searched leaf."""
        return self.on_branch and self.replaced_by is None

    def to_json(self) -> dict[str, Any]:
        """``{"id", "role", "timestamp", "snippet", "score", "replacedBy"}`` (camelCase,
        as the session format spells fields)."""
        return {
            "id": self.id,
            "role": self.role,
            "timestamp": self.timestamp,
            "snippet": self.snippet,
            "score": round(self.score, 6),
            "replacedBy": self.replaced_by,
        }


def query_phrases(query: str) -> list[list[str]]:
    """The query's whitespace-separated parts as lists of words, lower-cased, each part once
    (at most :data:`MAX_TERMS` words in all): ``src/app.py`` is one part of three words that
    must stand together, as a path or an identifier does in the text."""
    phrases: dict[tuple[str, ...], None] = {}
    count = 0
    for part in query.split():
        words = tuple(w.lower() for w in _WORD.findall(part))[: MAX_TERMS - count]
        if words and words not in phrases:
            phrases[words] = None
            count += len(words)
        if count >= MAX_TERMS:
            break
    return [list(p) for p in phrases]


def query_terms(query: str) -> list[str]:
    """The words of a query, lower-cased, each once, in order (at most :data:`MAX_TERMS`)."""
    return list(dict.fromkeys(w for phrase in query_phrases(query) for w in phrase))


def match_expression(phrases: Sequence[Sequence[str]]) -> str:
    """An FTS5 expression matching any of ``phrases`` (each a quoted string, its words
    adjacent): no operator or column filter in a query can reach SQLite."""
    return " OR ".join('"' + " ".join(p).replace('"', '""') + '"' for p in phrases)


def make_snippet(text: str, terms: Sequence[str], width: int = SNIPPET_CHARS) -> str:
    """``width`` characters of ``text`` around the first place a term (or, for a stemmed
    match, the term's stem) occurs; whitespace runs become one space."""
    position = _first_match(text, terms)
    flat_before = _SPACE.sub(" ", text[:position])
    flat_after = _SPACE.sub(" ", text[position:])
    lead = min(len(flat_before), width // 4)
    start = flat_before[len(flat_before) - lead :] if lead else ""
    body = start + flat_after
    cut_left = len(flat_before) > lead
    body = body.strip() if not cut_left else body.rstrip()
    cut_right = len(body) > width
    if cut_right:
        body = body[:width].rstrip()
    return ("…" if cut_left else "") + body + ("…" if cut_right else "")


def matching_lines(lines: Sequence[str], terms: Sequence[str]) -> list[int]:
    """The indexes of ``lines`` that hold one of ``terms`` (case-insensitive), or if none
    does, one of their stems (the stemmer matched another form); ``[]`` if none holds either."""
    for candidates in (terms, [_stem(t) for t in terms]):
        words = [t.lower() for t in candidates if t]
        found = [i for i, line in enumerate(lines) if any(w in line.lower() for w in words)]
        if found:
            return found
    return []


def _first_match(text: str, terms: Sequence[str]) -> int:
    for candidates in (terms, [_stem(t) for t in terms]):
        usable = [re.escape(t) for t in candidates if t]
        if not usable:
            continue
        found = re.search("|".join(usable), text, re.IGNORECASE)
        if found is not None:
            return found.start()
    return 0


def _stem(term: str) -> str:
    """A crude stem for placing the snippet when the stemmer matched another form."""
    return term[: max(3, len(term) - 3)] if len(term) > 4 else term


class _BranchView:
    """Which entries the model sees at one leaf, and what replaced the others."""

    def __init__(self, structure: IndexedEntries, leaf: int | None) -> None:
        self._s = structure
        self.key = (leaf, len(structure))
        path = _linear_path(structure, leaf)
        linear = path is not None
        if path is None:
            path = _walked_path(structure, leaf)
        self.position = dict(zip(path, range(len(path)), strict=True))
        if linear:  # a row is its own position: find the marked rows by scanning in C
            marked = sorted(
                row for kind in _MARKERS for row in _indexes(structure.types, kind, len(path))
            )
            walk: Iterable[tuple[int, int]] = zip(marked, marked, strict=True)
        else:
            walk = enumerate(path)
        self._compactions: list[tuple[int, int, int]] = []  # (position, first kept, row)
        edits: dict[str, int] = {}
        for i, row in walk:
            kind = structure.types[row]
            if kind == "compaction":
                kept_row = _row_of(structure, structure.refs[row])
                kept = self.position.get(kept_row, i) if kept_row is not None else i
                self._compactions.append((i, kept if kept < i else i, row))
            elif kind == "context_edit":
                target = structure.refs[row]
                if target is not None:
                    edits[target] = row
        self._edits = edits
        self._summaries: dict[int, int] | None = None

    def replaced_by(self, row: int) -> str | None:
        """The id of what replaced ``row`` in the context (see the module docstring)."""
        structure = self._s
        i = self.position.get(row)
        if i is None:
            return self._summary_of(row)
        kind = structure.types[row]
        hidden_in_kept = kind == "compaction" or structure.roles[row] == "system"
        for at, kept, compaction in self._compactions:
            if at > i and (i < kept or hidden_in_kept):
                return structure.ids[compaction]
        edit = self._edits.get(structure.ids[row])
        if edit is not None and self.position[edit] > i:
            return structure.ids[edit]
        return None

    def _summary_of(self, row: int) -> str | None:
        if self._summaries is None:
            self._summaries = _abandoned_branches(self._s)
        summary = self._summaries.get(row)
        return self._s.ids[summary] if summary is not None else None


_MARKERS: Final = ("compaction", "context_edit")
"""The entry types on a branch that replace others in its context."""

BRANCH_TYPES: Final = (*_MARKERS, "branch_summary")
"""Every entry type whose type and ref the branch rules here read (a store that reads a
session's structure in part reads these entries' types and refs, and no other's)."""


def _indexes(values: list[str], value: str, end: int) -> list[int]:
    """Where ``value`` is in ``values[:end]`` (each search a C scan)."""
    found: list[int] = []
    start = 0
    while True:
        try:
            start = values.index(value, start, end)
        except ValueError:
            return found
        found.append(start)
        start += 1


def _linear_path(structure: IndexedEntries, leaf: int | None) -> list[int] | None:
    """The branch ending at ``leaf`` when it is every row up to it, each the child of the row
    before (the usual session: no branch, no repeated id), found by comparing the lists
    whole; ``None`` otherwise (the caller walks the parents)."""
    if leaf is None:
        return None
    ids, parents, by_id = structure.ids, structure.parents, structure.by_id
    if len(by_id) != len(ids) or parents[1 : leaf + 1] != ids[:leaf]:
        return None
    first = parents[0]
    if first is not None and first in by_id:
        return None
    return list(range(leaf + 1))


def _walked_path(structure: IndexedEntries, leaf: int | None) -> list[int]:
    """The branch ending at ``leaf``, root first, found by walking the parents (a parent cycle:
    the entries before it repeats)."""
    path: list[int] = []
    by_id = structure.by_id
    parents = structure.parents
    row = leaf
    while row is not None:
        path.append(row)
        parent = parents[row]
        row = by_id.get(parent) if parent is not None else None
        if len(path) > len(parents):
            path = list(dict.fromkeys(path))
            break
    path.reverse()
    return path


def _row_of(structure: IndexedEntries, entry_id: str | None) -> int | None:
    return structure.by_id.get(entry_id) if entry_id is not None else None


def _abandoned_branches(structure: IndexedEntries) -> dict[int, int]:
    """Row → the first branch summary whose left branch holds it: the entries from the
    summary's ``fromId`` up to (not including) where that branch meets the summary's own."""
    depth = _depths(structure)
    covered: dict[int, int] = {}
    for summary, kind in enumerate(structure.types):
        if kind != "branch_summary":
            continue
        left = _row_of(structure, structure.refs[summary])
        if left is None:
            continue
        here = _parent_row(structure, summary)
        steps = 0
        limit = len(structure)
        while left is not None and steps <= limit:
            steps += 1
            while here is not None and depth[here] > depth[left]:
                here = _parent_row(structure, here)
            if here == left:
                break
            covered.setdefault(left, summary)
            left = _parent_row(structure, left)
    return covered


def _parent_row(structure: IndexedEntries, row: int) -> int | None:
    parent = structure.parents[row]
    found = structure.by_id.get(parent) if parent is not None else None
    return found if found != row else None


def _depths(structure: IndexedEntries) -> list[int]:
    """Each row's distance from its root; a parent later in the file (or a cycle) counts as a
    root, which only makes the abandoned-branch walk stop early."""
    depth = [0] * len(structure)
    for row in range(len(structure)):
        parent = _parent_row(structure, row)
        depth[row] = depth[parent] + 1 if parent is not None and parent < row else 0
    return depth


def search(
    index: SearchIndex,
    query: str,
    *,
    leaf_id: str | _Last | None = LAST_ENTRY,
    limit: int = 10,
    all_branches: bool = False,
    only_replaced: bool = False,
    roles: Collection[str] | None = None,
    snippet_chars: int = SNIPPET_CHARS,
    _retried: bool = False,
) -> list[SearchHit]:
    """The ``limit`` best hits for ``query`` in an up-to-date ``index`` (refreshed or caught
    up by the caller), on the branch ending at ``leaf_id`` (``None``: no branch, so only
    ``all_branches`` finds anything) or over the whole tree.

    ``only_replaced`` keeps only entries the model no longer sees at that leaf (replaced on the
    branch, or off it); ``roles`` keeps only those roles.
    """
    if limit <= 0:
        return []
    phrases = query_phrases(query)
    if not phrases:
        return []
    terms = query_terms(query)
    structure = index.structure
    if isinstance(leaf_id, _Last):
        leaf = len(structure) - 1 if len(structure) else None
    else:
        leaf = _row_of(structure, leaf_id)
    view = index.memo.get("branch")
    if not isinstance(view, _BranchView) or view.key != (leaf, len(structure)):
        view = _BranchView(structure, leaf)
        index.memo["branch"] = view
    picked: list[tuple[int, float, str | None, bool]] = []
    for row, score in index.rank(match_expression(phrases)):
        if row >= len(structure) or structure.by_id.get(structure.ids[row]) != row:
            continue  # an entry a later line with the same id shadows
        on_branch = row in view.position
        if not (on_branch or all_branches):
            continue
        if roles is not None and structure.roles[row] not in roles:
            continue
        replaced = view.replaced_by(row)
        if only_replaced and on_branch and replaced is None:
            continue
        picked.append((row, score, replaced, on_branch))
        if len(picked) >= limit:
            break
    hits: list[SearchHit] = []
    for row, score, replaced, on_branch in picked:
        try:
            data = index.entry_data(row)
        except StaleIndexError:
            if _retried:
                raise
            # The file changed where the fingerprint did not look: never trust the index.
            index.rebuild()
            return search(
                index,
                query,
                leaf_id=leaf_id,
                limit=limit,
                all_branches=all_branches,
                only_replaced=only_replaced,
                roles=roles,
                snippet_chars=snippet_chars,
                _retried=True,
            )
        found = entry_text(data) if data is not None else None
        text = found[1] if found is not None else ""
        hits.append(
            SearchHit(
                id=structure.ids[row],
                role=structure.roles[row] or "",
                timestamp=structure.timestamps[row],
                snippet=make_snippet(text, terms, snippet_chars),
                score=score,
                replaced_by=replaced,
                on_branch=on_branch,
            )
        )
    return hits


def entry_texts(index: SearchIndex, entry_ids: Sequence[str]) -> Mapping[str, str]:
    """The full searchable text of entries by id (read again from the source), for a caller
    that shows whole entries, as the recall tool does."""
    out: dict[str, str] = {}
    for entry_id in entry_ids:
        row = index.structure.by_id.get(entry_id)
        data = index.entry_data(row) if row is not None else None
        found = entry_text(data) if data is not None else None
        if found is not None:
            out[entry_id] = found[1]
    return out
