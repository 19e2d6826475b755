"""What the ``/tree`` selector shows, computed without a terminal (pi's tree selector, §5.4).

:class:`TreeView` holds one session's tree (a :class:`~pi_context.export.SessionDocument`) and
the selector's state: the filter, the search query, the folded branch segments, the selection
and the visible height. Its :attr:`TreeView.rows` are the lines to draw, top to bottom:

* always hidden: ``usage`` entries, and assistant messages without text unless they ended in
  an error or an abort or are the current leaf;
* the filter (:data:`FILTERS`): ``default`` hides ``label``, ``context_edit``, ``custom``,
  ``model_change``, ``thinking_level_change`` and ``session_info`` entries; ``no-tools`` also
  hides tool results; ``user-only`` shows user messages; ``labeled-only`` entries with a
  label; ``all`` everything but the always-hidden;
* the search: whitespace-separated tokens, each of which must occur (case-insensitive) in the
  entry's searchable text (:func:`searchable_text`);
* an entry hidden by these hangs its visible children on its nearest visible ancestor;
* a folded branch segment hides everything below it.

Indentation grows only where the visible tree branches: the children of a branch point get
``├─``/``└─`` connectors (``├⊞``/``└⊞`` when folded; a folded root starts with ``⊞``), entries
on the current branch are marked ``•`` and the current leaf ``← active``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pi_context.export.document import SessionDocument, entry_preview, text_of_content

__all__ = [
    "FILTERS",
    "TreeRow",
    "TreeView",
    "entry_text",
    "label_times",
    "searchable_text",
    "tree_filter_setting",
    "visible_height",
]

FILTERS: Final = ("default", "no-tools", "user-only", "labeled-only", "all")
"""The filters in Ctrl+O order."""

_METADATA: Final = frozenset(
    {"label", "context_edit", "custom", "model_change", "thinking_level_change", "session_info"}
)
"""Entry types the ``default`` (and ``no-tools``) filter hides."""

_ROW_CHARS: Final = 200
"""At most this many characters of an entry's text on its row (the terminal cuts the rest)."""

_MAX_INDENT: Final = 90
"""Indentation stops growing here (30 nested branch points): a hostile file with thousands of
nested branches would otherwise need memory quadratic in its depth."""


def tree_filter_setting(settings: Mapping[str, Any] | None) -> str:
    """The filter the selector opens with: setting ``treeFilterMode``, ``default`` when unset
    or not one of :data:`FILTERS`."""
    value = (settings or {}).get("treeFilterMode")
    return value if isinstance(value, str) and value in FILTERS else "default"


def visible_height(terminal_rows: int) -> int:
    """How many tree rows the selector shows (and pages by): ``max(5, rows // 2)``."""
    return max(5, terminal_rows // 2)


def entry_text(entry: Mapping[str, Any]) -> str:
    """The full text of an entry: what Ctrl+X copies and what the search looks into."""
    kind = entry.get("type")
    message = entry.get("message")
    if kind == "message" and isinstance(message, Mapping):
        role = message.get("role")
        content = message.get("content")
        if role == "assistant" and isinstance(content, list):
            return "\n".join(
                str(b.get("text", ""))
                for b in content
                if isinstance(b, Mapping) and b.get("type") == "text"
            )
        if role == "bashExecution":
            return f"{message.get('command', '')}\n{message.get('output', '')}".rstrip("\n")
        return text_of_content(content)
    if kind in ("compaction", "branch_summary"):
        return str(entry.get("summary", ""))
    if kind == "custom_message":
        content = entry.get("content")
        return content if isinstance(content, str) else text_of_content(content)
    return entry_preview(entry)


def _has_text(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        return bool(content.strip())
    if not isinstance(content, list):
        return False
    return any(
        isinstance(b, Mapping) and b.get("type") == "text" and str(b.get("text", "")).strip()
        for b in content
    )


def _role(entry: Mapping[str, Any]) -> str | None:
    message = entry.get("message")
    if entry.get("type") == "message" and isinstance(message, Mapping):
        role = message.get("role")
        return role if isinstance(role, str) else None
    return None


def _tool_calls(entries: Iterable[Mapping[str, Any]]) -> dict[str, tuple[str, str]]:
    """``toolCallId`` → (tool name, its main argument) over every assistant message."""
    calls: dict[str, tuple[str, str]] = {}
    for entry in entries:
        if _role(entry) != "assistant":
            continue
        content = entry["message"].get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, Mapping) or block.get("type") != "toolCall":
                continue
            call_id = block.get("id")
            if isinstance(call_id, str):
                calls[call_id] = (
                    str(block.get("name", "")),
                    _main_argument(block.get("arguments")),
                )
    return calls


def _main_argument(arguments: Any) -> str:
    if not isinstance(arguments, Mapping):
        return ""
    for key in ("command", "path", "file_path", "pattern", "query", "url"):
        value = arguments.get(key)
        if isinstance(value, str):
            return value
    try:
        return json.dumps(arguments, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return ""


def _one_line(text: str) -> str:
    return " ".join(text.split())[:_ROW_CHARS]


def _describe(entry: Mapping[str, Any], calls: Mapping[str, tuple[str, str]]) -> tuple[str, str]:
    """``(row text, searchable words beyond the text)`` of one entry."""
    kind = str(entry.get("type"))
    role = _role(entry)
    if role is not None:
        message = entry["message"]
        if role == "toolResult":
            name, argument = calls.get(str(message.get("toolCallId")), ("", ""))
            name = name or str(message.get("toolName", "tool"))
            shown = f"[{name}: {_one_line(argument)}]" if argument else f"[{name}]"
            return shown, f"toolResult {name} {argument}"
        if role == "bashExecution":
            return f"$ {_one_line(str(message.get('command', '')))}", "bash"
        if role == "assistant" and not _has_text(message):
            reason = message.get("stopReason")
            error = message.get("errorMessage")
            if reason == "error":
                return f"assistant: (error) {_one_line(str(error or ''))}".rstrip(), role
            if reason == "aborted":
                return "assistant: (aborted)", role
            calls_made = [
                str(b.get("name", ""))
                for b in message.get("content") or []
                if isinstance(b, Mapping) and b.get("type") == "toolCall"
            ]
            return f"assistant: → {', '.join(calls_made)}" if calls_made else "assistant:", role
        if role == "system":
            return "system prompt", role
        return f"{role}: {_one_line(entry_text(entry))}", role
    if kind == "compaction":
        return f"compaction: {_one_line(entry_text(entry))}", "compaction"
    if kind == "branch_summary":
        return f"branch summary: {_one_line(entry_text(entry))}", "branch summary"
    if kind == "custom_message":
        custom = str(entry.get("customType", ""))
        return f"[{custom}]: {_one_line(entry_text(entry))}", f"custom {custom}"
    if kind == "custom":
        custom = str(entry.get("customType", ""))
        return f"custom: {custom}", f"custom {custom}"
    if kind == "model_change":
        model = f"{entry.get('provider')}/{entry.get('modelId')}"
        return f"model: {model}", f"model {model}"
    if kind == "thinking_level_change":
        level = str(entry.get("thinkingLevel"))
        return f"thinking: {level}", f"thinking {level}"
    if kind == "label":
        return f"label: {_one_line(entry_preview(entry))}", "label"
    if kind == "session_info":
        return f"session name: {_one_line(str(entry.get('name', '')))}", "session name"
    if kind == "context_edit":
        return f"context edit: {entry.get('targetId')}", "context edit"
    return kind, kind


def searchable_text(
    entry: Mapping[str, Any],
    label: str | None = None,
    calls: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """What the search matches against, lower-cased: the label, the kind or role, the text, a
    tool result's tool and argument, a bash command, a custom type, ``compaction``, ``branch
    summary`` and the summary, ``model`` and the id, ``thinking`` and the level."""
    shown, words = _describe(entry, calls or {})
    return " ".join((label or "", words, shown, entry_text(entry))).lower()


def label_times(doc: SessionDocument) -> dict[str, str]:
    """The time of the ``label`` entry that set each current label (``YYYY-MM-DD HH:MM``)."""
    times: dict[str, str] = {}
    for entry in doc.entries:
        target = entry.get("targetId")
        if entry.get("type") != "label" or not isinstance(target, str):
            continue
        text, stamp = entry.get("label"), entry.get("timestamp")
        if isinstance(text, str) and text and isinstance(stamp, str):
            times[target] = stamp[:16].replace("T", " ")
        else:
            times.pop(target, None)
    return times


@dataclass(frozen=True, slots=True)
class TreeRow:
    """One line of the selector."""

    entry_id: str
    prefix: str
    """Connectors and indentation (with the fold mark) before the text."""
    text: str
    """The entry described on one line (not yet made terminal-safe)."""
    label: str | None
    label_time: str | None
    on_path: bool
    """On the current branch (root to leaf)."""
    is_leaf: bool
    folded: bool
    selected: bool


@dataclass(slots=True)
class _Node:
    entry: dict[str, Any]
    entry_id: str
    parent: int | None
    """Index of the parent node in :attr:`TreeView._nodes` (``None`` for a root)."""
    text: str
    search: str


class TreeView:
    """The selector's state over one session tree; every key of §5.4 is a method."""

    def __init__(
        self, doc: SessionDocument, *, filter_mode: str = "default", height: int = 5
    ) -> None:
        if filter_mode not in FILTERS:
            raise ValueError(f"unknown tree filter {filter_mode!r}; expected one of {FILTERS}")
        self.filter_mode = filter_mode
        self.query = ""
        self.height = max(1, height)
        self.show_label_times = False
        self._folded: set[int] = set()
        self._selected: int | None = None
        self._load(doc)
        self._refresh()
        self._select_nearest(self._leaf)

    # -- the tree ----------------------------------------------------------------------------

    def _load(self, doc: SessionDocument) -> None:
        self.leaf_id = doc.leaf_id
        self._labels = doc.labels()
        self._label_times = label_times(doc)
        calls = _tool_calls(doc.entries)
        self._nodes: list[_Node] = []
        index_of: dict[int, int] = {}  # id(entry) → node index
        for entry, _depth in doc.preorder():
            eid = str(entry["id"])
            parent_id = entry.get("parentId")
            parent_entry = doc.by_id.get(parent_id) if isinstance(parent_id, str) else None
            parent = index_of.get(id(parent_entry)) if parent_entry is not entry else None
            text, _words = _describe(entry, calls)
            search = searchable_text(entry, self._labels.get(eid), calls)
            index_of[id(entry)] = len(self._nodes)
            self._nodes.append(_Node(entry, eid, parent, text, search))
        leaf_entry = doc.by_id.get(doc.leaf_id) if doc.leaf_id is not None else None
        self._leaf = index_of.get(id(leaf_entry)) if leaf_entry is not None else None
        self._on_path: set[int] = set()
        node = self._leaf
        while node is not None and node not in self._on_path:
            self._on_path.add(node)
            node = self._nodes[node].parent

    def reload(self, doc: SessionDocument) -> None:
        """Take a changed session (a label was set): keep the selection, folds and filters."""
        keep = self.selected_id
        folded = {self._nodes[i].entry_id for i in self._folded}
        self._load(doc)
        self._folded = {i for i, n in enumerate(self._nodes) if n.entry_id in folded}
        self._refresh()
        target = next((i for i, n in enumerate(self._nodes) if n.entry_id == keep), self._leaf)
        self._select_nearest(target)

    @property
    def is_empty(self) -> bool:
        """The session has no entries at all (pi: ``No entries in session``)."""
        return not self._nodes

    # -- visibility ----------------------------------------------------------------------------

    def _passes(self, index: int, tokens: list[str]) -> bool:
        node = self._nodes[index]
        entry = node.entry
        kind = entry.get("type")
        role = _role(entry)
        if kind == "usage":
            return False
        if role == "assistant" and index != self._leaf:
            message = entry["message"]
            if not _has_text(message) and message.get("stopReason") not in ("error", "aborted"):
                return False
        mode = self.filter_mode
        if mode in ("default", "no-tools") and kind in _METADATA:
            return False
        if mode == "no-tools" and role == "toolResult":
            return False
        if mode == "user-only" and role != "user":
            return False
        if mode == "labeled-only" and node.entry_id not in self._labels:
            return False
        return all(token in node.search for token in tokens)

    def _refresh(self) -> None:
        """Recompute the visible tree: parents, children, order and the drawn prefixes."""
        tokens = self.query.lower().split()
        shown = [self._passes(i, tokens) for i in range(len(self._nodes))]
        parent_of: dict[int, int | None] = {}
        children: dict[int | None, list[int]] = {}
        for index, node in enumerate(self._nodes):  # preorder: parents come first
            if not shown[index]:
                continue
            parent = node.parent
            while parent is not None and not shown[parent]:
                parent = self._nodes[parent].parent
            parent_of[index] = parent
            children.setdefault(parent, []).append(index)
        self._visible_parent = parent_of
        self._children = children
        self._folded &= set(parent_of)
        order: list[int] = []
        prefixes: dict[int, str] = {}
        starts: set[int] = set()
        # (node, line prefix, prefix of what hangs below, connector to put the fold mark in)
        roots = children.get(None, [])
        stack: list[tuple[int, str, str, bool]] = [(r, "", "", False) for r in reversed(roots)]
        if len(roots) > 1:
            starts.update(roots)
        elif roots:
            starts.add(roots[0])
        while stack:
            index, line, below, branched = stack.pop()
            order.append(index)
            folded = index in self._folded
            if folded:
                line = line[:-2] + "⊞ " if branched else line + "⊞ "
            prefixes[index] = line
            kids = children.get(index, [])
            if folded or not kids:
                continue
            if len(kids) == 1:
                stack.append((kids[0], below, below, False))
                continue
            starts.update(kids)
            for position in range(len(kids) - 1, -1, -1):
                last = position == len(kids) - 1
                connector = "└─ " if last else "├─ "
                more = "" if len(below) >= _MAX_INDENT else "   " if last else "│  "
                stack.append((kids[position], below + connector, below + more, True))
        self._order = order
        self._position = {index: row for row, index in enumerate(order)}
        self._prefixes = prefixes
        self._starts = starts

    def _select_nearest(self, index: int | None) -> None:
        """Select ``index`` or its nearest visible ancestor (else the first row)."""
        seen: set[int] = set()
        while index is not None and index not in self._position and index not in seen:
            seen.add(index)
            index = self._nodes[index].parent
        if index is not None and index in self._position:
            self._selected = index
        else:
            self._selected = self._order[0] if self._order else None

    def _changed_view(self) -> None:
        """After a filter or search change: everything unfolds, the selection stays as near
        as the new view allows."""
        keep = self._selected
        self._folded.clear()
        self._refresh()
        self._select_nearest(keep if keep is not None else self._leaf)

    # -- what to draw ----------------------------------------------------------------------------

    @property
    def row_count(self) -> int:
        return len(self._order)

    @property
    def selected_index(self) -> int | None:
        """Row number of the selection (``None`` when nothing is visible)."""
        return self._position.get(self._selected) if self._selected is not None else None

    @property
    def selected_id(self) -> str | None:
        return self._nodes[self._selected].entry_id if self._selected is not None else None

    @property
    def selected_entry(self) -> dict[str, Any] | None:
        return self._nodes[self._selected].entry if self._selected is not None else None

    def row(self, row: int) -> TreeRow:
        index = self._order[row]
        node = self._nodes[index]
        label = self._labels.get(node.entry_id)
        return TreeRow(
            entry_id=node.entry_id,
            prefix=self._prefixes[index] + ("• " if index in self._on_path else ""),
            text=node.text,
            label=label,
            label_time=self._label_times.get(node.entry_id) if label is not None else None,
            on_path=index in self._on_path,
            is_leaf=index == self._leaf,
            folded=index in self._folded,
            selected=index == self._selected,
        )

    @property
    def rows(self) -> list[TreeRow]:
        """Every visible row, top to bottom."""
        return [self.row(r) for r in range(len(self._order))]

    def window(self) -> tuple[int, list[TreeRow]]:
        """The first row number and the :attr:`height` rows shown around the selection."""
        count = len(self._order)
        at = self.selected_index or 0
        start = max(0, min(at - self.height // 2, count - self.height))
        return start, [self.row(r) for r in range(start, min(count, start + self.height))]

    # -- keys ------------------------------------------------------------------------------------

    def move(self, delta: int) -> None:
        """Up (-1) / Down (+1), wrapping around."""
        if not self._order:
            return
        at = self.selected_index or 0
        self._selected = self._order[(at + delta) % len(self._order)]

    def page(self, direction: int) -> None:
        """Left/PageUp (-1), Right/PageDown (+1): by the visible height, stopping at the ends."""
        if not self._order:
            return
        at = (self.selected_index or 0) + direction * self.height
        self._selected = self._order[max(0, min(len(self._order) - 1, at))]

    def set_filter(self, mode: str) -> None:
        if mode not in FILTERS:
            raise ValueError(f"unknown tree filter {mode!r}")
        self.filter_mode = mode
        self._changed_view()

    def toggle_no_tools(self) -> None:
        """Ctrl+T: ``no-tools``, or back to ``default`` when it is on."""
        self.set_filter("default" if self.filter_mode == "no-tools" else "no-tools")

    def cycle_filter(self, forward: bool = True) -> None:
        """Ctrl+O (forward) / Shift+Ctrl+O: default → no-tools → user-only → labeled-only → all."""
        step = 1 if forward else -1
        self.set_filter(FILTERS[(FILTERS.index(self.filter_mode) + step) % len(FILTERS)])

    def type(self, text: str) -> None:
        """Printable characters typed: appended to the search."""
        if text:
            self.query += text
            self._changed_view()

    def backspace(self) -> None:
        if self.query:
            self.query = self.query[:-1]
            self._changed_view()

    def clear_search(self) -> bool:
        """Esc: clear the search; ``False`` when there was none (Esc then closes)."""
        if not self.query:
            return False
        self.query = ""
        self._changed_view()
        return True

    def toggle_label_times(self) -> None:
        self.show_label_times = not self.show_label_times

    def _segment_start_of(self, index: int | None) -> int | None:
        """``index`` itself if it starts a branch segment, else its nearest visible ancestor
        that does."""
        while index is not None and index not in self._starts:
            index = self._visible_parent.get(index)
        return index

    def _foldable(self, index: int) -> bool:
        return index in self._starts and bool(self._children.get(index))

    def fold_or_previous(self) -> None:
        """Ctrl/Alt+Left: fold the selected segment start, else jump to the previous start
        (the start of this segment, or of the one it branched from)."""
        index = self._selected
        if index is None:
            return
        if self._foldable(index) and index not in self._folded:
            self._folded.add(index)
            self._refresh()
            return
        start = (
            self._segment_start_of(self._visible_parent.get(index))
            if index in self._starts
            else self._segment_start_of(index)
        )
        if start is not None:
            self._selected = start

    def unfold_or_next(self) -> None:
        """Ctrl/Alt+Right: unfold the selected folded segment, else jump to the next segment
        start below."""
        index = self._selected
        if index is None:
            return
        if index in self._folded:
            self._folded.discard(index)
            self._refresh()
            return
        at = self._position[index]
        for row in range(at + 1, len(self._order)):
            if self._order[row] in self._starts:
                self._selected = self._order[row]
                return
