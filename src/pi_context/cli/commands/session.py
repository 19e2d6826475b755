"""``pictx session info|tree|context FILE``: look into a pi session file without changing it
(``compaction`` and ``search`` are their own modules, imported when they run).

Lines the loader skipped (malformed or torn) are printed to stderr as warnings; ``--strict``
turns them into an error. A file that is not a session fails with one line naming the file
and line. Text from the file (names, labels, messages) is shown terminal-safe
(:mod:`pi_context.cli.terminal_text`); ``--json`` output escapes control characters.

An ordinary file is read through a :class:`~pi_context.session.column_index.ColumnIndex`
(a few numbers per entry, lines re-read when printed: well under twice the file's size in
memory however many entries it has); a file with anything to report or recover from is loaded
as a full :class:`Session`, so both print the same.
"""

from __future__ import annotations

import contextlib
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from pi_context import _json
from pi_context.cli.commands.store import session_argument
from pi_context.cli.lazy_group import LazyCommand, LazyGroup
from pi_context.cli.terminal_text import echo, json_for_terminal, terminal_safe
from pi_context.errors import SessionError, SessionFormatError, TreeError
from pi_context.export.document import entry_kind, entry_preview
from pi_context.messages import AgentMessage, text_of
from pi_context.session import Entry, ModelRef, Session, convert_to_llm
from pi_context.session.column_index import ColumnIndex, IndexedPath, stream_indexed_context
from pi_context.session.projection import (
    path_settings,
    stream_context,
)
from pi_context.tokens import estimate_tokens

__all__ = ["context_command", "info_command", "session_group", "tree_command"]


_Node = TypeVar("_Node")


def _open(path: Path, strict: bool) -> Session:
    """Open and check every entry (without keeping them decoded): problems are reported up
    front, one line each, and the commands then read only checked entries. An empty file is
    not a session (opening one for a run starts a new session in it; inspecting one must not
    invent a session id)."""
    with contextlib.suppress(OSError):
        if path.is_file() and path.stat().st_size == 0:
            raise SessionError("not a pi session: empty file", path=path)
    session = Session.open(path, lock_timeout=0)
    for problem in session.check():
        if strict:
            raise SessionFormatError(problem.error, path=problem.path, line=problem.line)
        echo(f"pictx: warning: {problem}", err=True)
    return session


def _model_text(model: Any) -> str:
    if not model:
        return "-"
    return f"{model.get('provider')}/{model.get('modelId')}"


def _print_json(value: Any) -> None:
    sys.stdout.buffer.write(json_for_terminal(_json.dumps(value).decode("utf-8")).encode() + b"\n")
    sys.stdout.flush()


def _image_marks(content: Any) -> str:
    """``[image/png 12.3 KB] `` for each image block: what a terminal shows instead of the
    base64."""
    if not isinstance(content, list):
        return ""
    marks = [
        f"[{terminal_safe(str(b.get('mimeType', 'image')))} "
        f"{len(str(b.get('data', ''))) * 3 / 4 / 1024:.1f} KB] "
        for b in content
        if isinstance(b, dict) and b.get("type") == "image"
    ]
    return "".join(marks)


def _without_image_data(message: Any) -> Any:
    """``message`` with each image's base64 replaced by a note of its length (for terminals)."""
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return message
    blocks = [
        {**b, "data": f"<{len(str(b.get('data', '')))} characters of base64; pipe to get them>"}
        if isinstance(b, dict) and b.get("type") == "image"
        else b
        for b in content
    ]
    return {**message, "content": blocks}


def _snippet(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _kind(entry: Entry) -> str:
    if entry.type == "message":
        role = entry.role
        if role is None:
            message = entry.peek().get("message")
            role = message.get("role") if isinstance(message, dict) else None
        return f"message:{role}"
    return entry.type


_TREE_KINDS = {"compaction": "[compaction]", "branch_summary": "[branch summary]"}
"""Kinds drawn as markers in the tree (where the context was condensed)."""


def _describe(entry: Entry) -> str:
    """An entry's kind and :func:`~pi_context.export.document.entry_preview`, for the tree view
    (reads the checked entry without keeping it decoded)."""
    if entry.type == "unreadable":
        return "(unreadable line: left out)"
    data = entry.peek()
    kind = entry_kind(data)
    preview = entry_preview(data) or "(not interpreted)"
    return f"{_TREE_KINDS.get(kind, kind)}: {preview}"


@dataclass(frozen=True, slots=True)
class _ContextSummary:
    messages: int
    tokens: int
    model: ModelRef | None
    thinking_level: str


def _context_summary(session: Session) -> _ContextSummary:
    """Message count and token estimate of the current context, computed entry by entry
    without keeping the decoded entries (see :func:`stream_context`)."""
    path = session.branch_view()
    return _summary_of(path, stream_context(path))


def _summary_of(
    path: Sequence[Entry], messages: Iterable[tuple[Entry, AgentMessage]]
) -> _ContextSummary:
    level, model = path_settings(path)
    count = tokens = 0
    for _, message in messages:
        count += 1
        tokens += estimate_tokens(message)
    return _ContextSummary(count, tokens, model, level)


@dataclass(frozen=True, slots=True)
class _Facts:
    """What ``session info`` shows, from a loaded session or from a column index."""

    header: dict[str, Any]
    version: int
    legacy: bool
    cwd: str | None
    name: str | None
    entries: int
    kinds: dict[str, int]
    leaves: int
    leaf_id: str | None
    path_length: int
    context: _ContextSummary
    labels: dict[str, str]
    problems: list[str]


def _session_facts(session: Session) -> _Facts:
    return _Facts(
        header=session.header,
        version=session.file_version,
        legacy=session.is_legacy,
        cwd=session.cwd,
        name=session.name,
        entries=len(session.entries),
        kinds=dict(sorted(Counter(_kind(e) for e in session.entries).items())),
        leaves=len(session.leaves()),
        leaf_id=session.leaf_id,
        path_length=len(session.branch_view()),
        context=_context_summary(session),
        labels=session.labels,
        problems=[str(p) for p in session.problems],
    )


def _indexed_facts(index: ColumnIndex) -> _Facts:
    positions = index.path(index.leaf)
    cwd = index.header.get("cwd")
    kinds: Counter[str] = Counter()
    for (kind, role), count in index.kinds.items():
        kinds[f"message:{role}" if kind == "message" else kind] += count
    return _Facts(
        header=index.header,
        version=index.version,
        legacy=False,
        cwd=cwd if isinstance(cwd, str) else None,
        name=index.name,
        entries=len(index),
        kinds=dict(sorted(kinds.items())),
        leaves=index.leaf_count(),
        leaf_id=index.entry(index.leaf).id if len(index) else None,
        path_length=len(positions),
        context=_summary_of(
            IndexedPath(index, positions), stream_indexed_context(index, positions)
        ),
        labels=dict(index.labels),
        problems=[],
    )


@click.group(
    "session",
    cls=LazyGroup,
    lazy_commands={
        "compaction": LazyCommand(
            "pi_context.cli.commands.compact:show_compaction_command",
            "Show what compaction ENTRY_ID of FILE replaced: the summarized entries and the "
            "summary.",
        ),
        "search": LazyCommand(
            "pi_context.cli.commands.session_search:search_command",
            "Search the whole history of FILE for QUERY, best first, saying what replaced "
            "each hit.",
        ),
    },
)
def session_group() -> None:
    """Inspect pi session files (never modifies them)."""


@session_group.command("info")
@session_argument
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--strict", is_flag=True, help="Decode every line; fail on any malformed or torn one."
)
def info_command(file: Path, as_json: bool, strict: bool) -> None:
    """Summary of a session: header, name, entry counts, branches, current leaf, context size."""
    index = ColumnIndex.open(file, parallel=True)
    if index is not None:
        with index:
            facts = _indexed_facts(index)
    else:
        facts = _session_facts(_open(file, strict))
    context = facts.context
    tokens = context.tokens
    kinds = facts.kinds
    info = {
        "file": str(file),
        "id": str(facts.header.get("id")),
        "version": facts.version,
        "cwd": facts.cwd,
        "created": facts.header.get("timestamp"),
        "parentSession": facts.header.get("parentSession"),
        "name": facts.name,
        "entries": facts.entries,
        "kinds": kinds,
        "leaves": facts.leaves,
        "leafId": facts.leaf_id,
        "pathLength": facts.path_length,
        "contextMessages": context.messages,
        "contextTokens": tokens,
        "model": context.model,
        "thinkingLevel": context.thinking_level,
        "labels": facts.labels,
        "problems": facts.problems,
    }
    if as_json:
        _print_json(info)
        return
    model = context.model
    lines = [
        f"file:          {file}",
        f"session:       {info['id']} (v{facts.version}"
        + (", migrated to v3 in memory; rewritten on first append)" if facts.legacy else ")"),
        f"name:          {facts.name or '-'}",
        f"cwd:           {facts.cwd}",
        f"created:       {facts.header.get('timestamp')}",
    ]
    if facts.header.get("parentSession"):
        lines.append(f"forked from:   {facts.header.get('parentSession')}")
    lines += [
        f"entries:       {facts.entries} (" + ", ".join(f"{k} {v}" for k, v in kinds.items()) + ")",
        f"branches:      {facts.leaves} leaves; current leaf {facts.leaf_id or '-'}",
        f"context:       {context.messages} messages, ~{tokens} tokens (chars/4)",
        f"model:         {_model_text(model)}",
        f"thinking:      {context.thinking_level}",
        f"labels:        {len(facts.labels)}",
    ]
    if facts.problems:
        lines.append(f"problems:      {len(facts.problems)} skipped line(s)")
    echo("\n".join(lines))


def _forest_walk(
    roots: Sequence[_Node],
    children: Callable[[_Node], Sequence[_Node]],
    key: Callable[[_Node], str],
) -> Iterator[tuple[_Node, int, str]]:
    """Each node of the forest with its depth and drawing prefix, in preorder; indentation
    grows only where the tree branches.

    Linear in the nodes yielded, whatever the depth (an explicit stack): a node whose ``key`` is
    already open on the way down is yielded but not expanded again, so a cycle ends there.
    """
    open_keys: set[str] = set()
    stack: list[tuple[_Node, int, str, str] | str] = []
    for number, root in enumerate(reversed(roots)):
        last = number == 0
        prefix = "" if len(roots) == 1 else ("└─ " if last else "├─ ")
        rest = "" if len(roots) == 1 else ("   " if last else "│  ")
        stack.append((root, 0, prefix, rest))
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            open_keys.discard(item)
            continue
        node, depth, prefix, rest = item
        yield node, depth, prefix
        name = key(node)
        if name in open_keys:
            continue
        open_keys.add(name)
        stack.append(name)
        kids = children(node)
        if len(kids) == 1:
            stack.append((kids[0], depth + 1, rest, rest))
            continue
        for number, child in enumerate(reversed(kids)):
            last = number == 0
            branch = ("└─ " if last else "├─ ", "   " if last else "│  ")
            stack.append((child, depth + 1, rest + branch[0], rest + branch[1]))


def _tree_line(entry: Entry, on_path: bool, prefix: str, label: str | None, leaf: bool) -> str:
    text = f"{'*' if on_path else ' '} {prefix}{entry.id} {_describe(entry)}"
    if label:
        text += f"  [{label}]"
    if leaf:
        text += "  ← leaf"
    return text


def _tree_lines(session: Session) -> Iterator[str]:
    """Render the forest (:func:`_forest_walk`). An entry is on the current path when it
    stands at its depth on that path, so no set of path entries is built."""
    tree = session.tree
    path = session.branch_view()
    leaf = session.leaf
    labels = tree.labels

    def children(entry: Entry) -> Sequence[Entry]:
        return tree.child_entries(entry.id)

    for entry, depth, prefix in _forest_walk(tree.roots(), children, lambda entry: entry.id):
        on_path = depth < len(path) and path[depth] is entry
        yield _tree_line(entry, on_path, prefix, labels.get(entry.id), entry is leaf)


def _indexed_tree_lines(index: ColumnIndex) -> Iterator[str]:
    """:func:`_tree_lines` over a column index: the same lines, each entry read from the file
    as it is printed."""
    starts, kids = index.children()
    path = index.path(index.leaf)
    labels = index.labels

    def children(position: int) -> Sequence[int]:
        return kids[starts[position] : starts[position + 1]]

    for position, depth, prefix in _forest_walk(index.roots(), children, str):
        entry = index.entry(position)
        on_path = depth < len(path) and path[depth] == position
        yield _tree_line(entry, on_path, prefix, labels.get(entry.id), position == index.leaf)


@session_group.command("tree")
@session_argument
@click.option(
    "--strict", is_flag=True, help="Decode every line; fail on any malformed or torn one."
)
def tree_command(file: Path, strict: bool) -> None:
    """The entry tree: branches, labels, compaction and branch-summary markers, current leaf.

    ``*`` marks the current path; ``← leaf`` the current leaf.
    """
    out = sys.stdout
    index = ColumnIndex.open(file, parallel=True)
    if index is not None:
        with index:
            for line in _indexed_tree_lines(index):
                out.write(terminal_safe(line) + "\n")
    else:
        for line in _tree_lines(_open(file, strict)):
            out.write(terminal_safe(line) + "\n")
    out.flush()


@session_group.command("context")
@session_argument
@click.option(
    "--leaf", "leaf_id", default=None, help="Entry id to project (default: current leaf)."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--strict", is_flag=True, help="Decode every line; fail on any malformed or torn one."
)
def context_command(file: Path, leaf_id: str | None, as_json: bool, strict: bool) -> None:
    """The messages the model would be sent at the leaf, after compaction and context edits.

    With --json: {"leafId", "model", "thinkingLevel", "messages": [{"entryId", "tokens",
    "message"}]}; ``message`` is the provider-role message (summaries and extension messages as
    user messages), ``tokens`` pi's estimate for it. Images show as ``[image/png 12.3 KB]``;
    with --json on a terminal their base64 is replaced by its length (piped output keeps it).
    """
    index = ColumnIndex.open(file, parallel=True)
    if index is not None:
        with index:
            found = index.leaf if leaf_id is None else index.positions.get(leaf_id)
            if found is None:
                raise TreeError(f"no entry with id {leaf_id!r}", path=file)
            positions = index.path(found)
            _print_context(
                IndexedPath(index, positions), stream_indexed_context(index, positions), as_json
            )
        return
    session = _open(file, strict)
    if leaf_id is not None and session.get(leaf_id) is None:
        raise TreeError(f"no entry with id {leaf_id!r}", path=file)
    path = session.branch_view(leaf_id)
    _print_context(path, stream_context(path), as_json)


def _print_context(
    path: Sequence[Entry], messages: Iterable[tuple[Entry, AgentMessage]], as_json: bool
) -> None:
    level, model = path_settings(path)
    head = {"leafId": path[-1].id if path else None, "model": model, "thinkingLevel": level}
    # Rows are written as they are projected (entry by entry), never all held at once.
    rows = (
        (entry.id, estimate_tokens(message), converted[0])
        for entry, message in messages
        if (converted := convert_to_llm([message]))
    )
    if as_json:
        out = sys.stdout.buffer
        on_screen = sys.stdout.isatty()  # megabytes of base64 help nobody on a screen
        opening = _json.dumps(head)[:-1] + b',"messages":['
        out.write(json_for_terminal(opening.decode("utf-8")).encode())
        for number, (entry_id, tokens, message) in enumerate(rows):
            shown = _without_image_data(message) if on_screen else message
            row = {"entryId": entry_id, "tokens": tokens, "message": shown}
            text = json_for_terminal(_json.dumps(row).decode("utf-8"))
            out.write((b"," if number else b"") + text.encode())
        out.write(b"]}\n")
        sys.stdout.flush()
        return
    total = count = 0
    for entry_id, tokens, message in rows:
        total += tokens
        count += 1
        role = message.get("role")
        if role == "assistant":
            content = message.get("content") or []
            text = text_of(content, " ")
            calls = [
                f"{b.get('name')}(…)"
                for b in content
                if isinstance(b, dict) and b.get("type") == "toolCall"
            ]
            if calls:
                text = (text + " " if text else "") + " ".join(calls)
        elif role == "system":
            sections = message.get("sections")
            text = "sections: " + ", ".join(sections) if isinstance(sections, dict) else ""
        else:
            content = message.get("content")
            text = _image_marks(content) + text_of(content, " ")
        echo(f"{entry_id}  {role:<10} {tokens:>6}  {_snippet(text, 70)}")
    echo(
        f"-- leaf {head['leafId'] or '-'}: {count} messages, ~{total} tokens; "
        f"model {_model_text(model)}; "
        f"thinking {level}"
    )
