"""A read-only view of one session file for exports: entries, tree, active path, labels.

Exports only need to read, so this works straight from the JSONL (the same reading rules as
pi: blank and malformed lines are skipped, the first parsed line must be the header, the leaf
is the last entry). A live session passes its own entries and leaf to
:meth:`SessionDocument.from_entries` (:meth:`SessionDocument.from_session` for a
:class:`~pi_context.session.store.Session`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_context import _json
from pi_context.errors import SessionError, SessionFormatError
from pi_context.session._file.opening import read_regular
from pi_context.session._load.checks import checked_entry
from pi_context.session.problems import bounded

if TYPE_CHECKING:
    from pi_context.session.store import Session

__all__ = [
    "PREVIEW_WIDTH",
    "SessionDocument",
    "entry_kind",
    "entry_preview",
    "export_target",
    "text_of_content",
    "tree_marker",
]


def export_target(out: str | Path) -> Path:
    """``out`` as the path an export writes to, refused (:class:`SessionError` naming it) when its directory does not exist: an export, like ``open()``, creates no directories,
    so a mistyped folder is reported instead of appearing on disk."""
    target = Path(out)
    if not target.parent.is_dir():
        raise SessionError(
            f"cannot write the export: the directory {target.parent} does not exist",
            path=target,
        )
    return target


LEAF_MARKER, ON_PATH_MARKER, OFF_PATH_MARKER = "◉", "●", "○"


def tree_marker(entry: Mapping[str, Any], leaf: Mapping[str, Any] | None, on_path: bool) -> str:
    """The tree's bullet for ``entry``: the leaf, an entry on the active path, or another
    branch's (the HTML export's tree and ``/tree``'s text form draw the same)."""
    if entry is leaf:
        return LEAF_MARKER
    return ON_PATH_MARKER if on_path else OFF_PATH_MARKER


def text_of_content(content: Any) -> str:
    """The text blocks of a content value joined (a string is returned as is)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
    )


PREVIEW_WIDTH = 80
"""How long :func:`entry_preview` may be."""
_TEXT_WIDTH = 60
"""How much of free text (a message, a summary) a preview keeps, so the details around it show."""


def _snippet(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _message_preview(message: Mapping[str, Any]) -> str:
    role = message.get("role")
    content = message.get("content")
    if role == "assistant":
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        text = _snippet(
            " ".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text"), _TEXT_WIDTH
        )
        calls = [str(b.get("name", "")) for b in blocks if b.get("type") == "toolCall"]
        return " ".join(part for part in (text, "→ " + ", ".join(calls) if calls else "") if part)
    if role == "toolResult":
        return f"{message.get('toolName', '')}: {_snippet(text_of_content(content), _TEXT_WIDTH)}"
    if role == "system":
        sections = message.get("sections")
        return (
            ", ".join(map(str, sections))
            if isinstance(sections, dict) and sections
            else "system prompt"
        )
    if role == "bashExecution":
        return f"$ {_snippet(str(message.get('command', '')), _TEXT_WIDTH)}"
    return _snippet(text_of_content(content), _TEXT_WIDTH)


def entry_preview(entry: Mapping[str, Any]) -> str:
    """One line saying what an entry holds, after its kind (:func:`entry_kind`): the start of a
    message's text, the tools an assistant called, where a compaction keeps from, the model
    switched to... At most :data:`PREVIEW_WIDTH` characters; empty for a kind it does not know.

    The HTML export's tree, ``/tree``'s text form and ``pictx session tree`` all show it.
    """
    kind = entry.get("type")
    message = entry.get("message")
    if kind == "message" and isinstance(message, dict):
        text = _message_preview(message)
    elif kind == "compaction":
        text = (
            f"keeps from {entry.get('firstKeptEntryId')}, {entry.get('tokensBefore')} tokens "
            f"before: {_snippet(str(entry.get('summary', '')), _TEXT_WIDTH)}"
        )
    elif kind == "branch_summary":
        text = f"from {entry.get('fromId')}: {_snippet(str(entry.get('summary', '')), _TEXT_WIDTH)}"
    elif kind == "model_change":
        text = f"{entry.get('provider')}/{entry.get('modelId')}"
    elif kind == "thinking_level_change":
        text = str(entry.get("thinkingLevel"))
    elif kind == "context_edit":
        action = "omit" if entry.get("replacement") is None else "replace"
        text = f"{action} {entry.get('targetId')}"
    elif kind == "label":
        text = f"{entry.get('targetId')}: {entry.get('label') or '(cleared)'}"
    elif kind == "session_info":
        text = str(entry.get("name", ""))
    elif kind == "custom_message":
        content = entry.get("content")
        body = content if isinstance(content, str) else text_of_content(content)
        text = f"{entry.get('customType')}: {_snippet(body, _TEXT_WIDTH)}"
    elif kind == "custom":
        text = str(entry.get("customType"))
    elif kind == "usage":
        text = f"{entry.get('kind')} {entry.get('provider')}/{entry.get('model')}"
    else:
        text = ""
    return _snippet(text, PREVIEW_WIDTH)


def entry_kind(entry: Mapping[str, Any]) -> str:
    message = entry.get("message")
    if entry.get("type") == "message" and isinstance(message, dict):
        return str(message.get("role"))
    return str(entry.get("type"))


@dataclass
class SessionDocument:
    """One session: its header, entries in file order and the active leaf."""

    header: dict[str, Any]
    entries: list[dict[str, Any]]
    leaf_id: str | None
    path: Path | None = None
    problems: list[str] = field(default_factory=list)
    """``FILE:LINE: what is wrong`` for each entry read with fields of the wrong type."""
    by_id: dict[str, dict[str, Any]] = field(init=False)
    """Entries by id; with a duplicated id the later entry wins, as in pi."""
    children: dict[str | None, list[int]] = field(init=False)
    """Indices (into :attr:`entries`) of each id's children; ``None`` holds the roots."""

    def __post_init__(self) -> None:
        self.by_id = {str(entry["id"]): entry for entry in self.entries}
        self.children = {}
        for index, entry in enumerate(self.entries):
            parent = entry.get("parentId")
            key = (
                parent
                if isinstance(parent, str) and parent in self.by_id and parent != entry["id"]
                else None
            )
            self.children.setdefault(key, []).append(index)

    @classmethod
    def from_entries(
        cls,
        header: Mapping[str, Any],
        entries: Iterable[Mapping[str, Any]],
        leaf_id: str | None,
        *,
        path: Path | None = None,
    ) -> SessionDocument:
        return cls(dict(header), [dict(e) for e in entries], leaf_id, path)

    @classmethod
    def from_session(cls, session: Session) -> SessionDocument:
        """A live session at its current leaf (not the file's last line)."""
        return cls.from_entries(
            session.header,
            [entry.data for entry in session.entries],
            session.leaf_id,
            path=session.file_path,
        )

    @classmethod
    def load(cls, path: str | Path) -> SessionDocument:
        """Read a session file (any version; entries without ids are chained in file order)."""
        file = Path(path)
        try:
            data = read_regular(file)  # refuses FIFOs and devices, reads no further than the size
        except OSError as exc:
            raise SessionFormatError(f"cannot read session: {exc.strerror}", path=file) from exc
        header: dict[str, Any] | None = None
        entries: list[dict[str, Any]] = []
        problems: list[str] = []
        previous: str | None = None
        for number, raw in enumerate(data.split(b"\n"), start=1):
            if not raw.strip():
                continue
            try:
                value = _json.loads(raw)
            except ValueError:
                continue
            if not isinstance(value, dict):
                continue
            if header is None:
                if value.get("type") != "session" or not isinstance(value.get("id"), str):
                    raise SessionFormatError("not a valid pi session", path=file, line=number)
                header = value
                continue
            value, faults = checked_entry(value)  # fields of the wrong type are left out
            if faults:
                problems.append(bounded(f"{file}:{number}: {'; '.join(faults)}"))
            if not isinstance(value.get("id"), str):
                value = {**value, "id": f"#{number}", "parentId": previous}
            previous = value["id"]
            entries.append(value)
        if header is None:
            raise SessionFormatError("not a valid pi session (no header)", path=file)
        leaf = entries[-1]["id"] if entries else None
        return cls(header, entries, leaf, file, problems)

    # -- tree -------------------------------------------------------------------------------

    def path_to(self, entry_id: str | None) -> list[dict[str, Any]]:
        """Root-first entries from the root to ``entry_id`` (empty for ``None``)."""
        out: list[dict[str, Any]] = []
        seen: set[str] = set()
        current = self.by_id.get(entry_id) if entry_id is not None else None
        while current is not None and current["id"] not in seen:
            seen.add(current["id"])
            out.append(current)
            parent = current.get("parentId")
            current = self.by_id.get(parent) if isinstance(parent, str) else None
        out.reverse()
        return out

    @property
    def active_path(self) -> list[dict[str, Any]]:
        return self.path_to(self.leaf_id)

    def preorder(self) -> list[tuple[dict[str, Any], int]]:
        """Every entry once with its display depth; depth grows only at branch points.

        An entry shadowed by a later one with the same id is listed without children (they
        belong to the later one); entries caught in a parent cycle come last, at the top level.
        """
        out: list[tuple[dict[str, Any], int]] = []
        visited: set[int] = set()
        stack = [(index, 0) for index in reversed(self.children.get(None, []))]
        while stack:
            index, depth = stack.pop()
            if index in visited:
                continue
            visited.add(index)
            entry = self.entries[index]
            out.append((entry, depth))
            if self.by_id.get(str(entry["id"])) is not entry:
                continue
            kids = self.children.get(str(entry["id"]), [])
            child_depth = depth + 1 if len(kids) > 1 else depth
            stack.extend((kid, child_depth) for kid in reversed(kids))
        for index, entry in enumerate(self.entries):
            if index not in visited:
                out.append((entry, 0))
        return out

    def labels(self) -> dict[str, str]:
        """Resolved labels: the last ``label`` entry per target wins; one without text clears."""
        result: dict[str, str] = {}
        for entry in self.entries:
            if entry.get("type") != "label" or not isinstance(entry.get("targetId"), str):
                continue
            text = entry.get("label")
            if isinstance(text, str) and text:
                result[entry["targetId"]] = text
            else:
                result.pop(entry["targetId"], None)
        return result

    def name(self) -> str | None:
        name: str | None = None
        for entry in self.entries:
            if entry.get("type") == "session_info":
                value = entry.get("name")
                name = value.strip() or None if isinstance(value, str) else None
        return name

    def tool_results(self) -> dict[str, dict[str, Any]]:
        """Tool-result messages by ``toolCallId``."""
        found: dict[str, dict[str, Any]] = {}
        for entry in self.entries:
            message = entry.get("message")
            if (
                entry.get("type") == "message"
                and isinstance(message, dict)
                and message.get("role") == "toolResult"
                and isinstance(message.get("toolCallId"), str)
            ):
                found[message["toolCallId"]] = message
        return found

    def replaced_ranges(self, path: Sequence[Mapping[str, Any]]) -> dict[str, tuple[int, int]]:
        """For each compaction on ``path``: the ``[start, end)`` path indices it replaced.

        A compaction summarizes from the previous compaction's first kept entry up to (not
        including) its own first kept entry; retain-none or a dangling id means everything up
        to the compaction itself.
        """
        ranges: dict[str, tuple[int, int]] = {}
        start = 0
        for index, entry in enumerate(path):
            if entry.get("type") != "compaction":
                continue
            kept = entry.get("firstKeptEntryId")
            end = index
            for j in range(index):
                if path[j].get("id") == kept:
                    end = j
                    break
            ranges[str(entry["id"])] = (start, max(start, end))
            start = max(start, end)
        return ranges
