"""``pictx session info|tree|context FILE``: look into a pi session file without changing it
(``compaction`` and ``search`` are their own modules, imported when they run).

Lines the loader skipped (malformed or torn) are printed to stderr as warnings; ``--strict``
turns them into an error. A file that is not a session fails with one line naming the file
and line. Text from the file (names, labels, messages) is shown terminal-safe
(:mod:`pi_context.cli.terminal_text`); ``--json`` output escapes control characters.

An ordinary file is read through a :class:`~pi_context.session._index.file_index.ColumnIndex`
(a few numbers per entry, lines re-read when printed: well under twice the file's size in
memory however many entries it has); a file with anything to report or recover from is loaded
as a full :class:`Session`. The commands read either through the same
:class:`~pi_context.session.entry_store.EntryTree` and the same projection rules, so both print
the same.
"""

from __future__ import annotations

import contextlib
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from pi_context import _json
from pi_context.cli.commands.store import session_argument
from pi_context.cli.lazy_group import LazyCommand, LazyGroup
from pi_context.cli.terminal_text import echo, json_for_terminal, terminal_safe
from pi_context.errors import SessionError, SessionFormatError, TreeError
from pi_context.export.document import entry_kind, entry_preview
from pi_context.messages import text_of
from pi_context.session import Entry, ModelRef, Session, convert_to_llm
from pi_context.session._index.file_index import ColumnIndex
from pi_context.session.entry_store import EntryTree, child_positions, path_positions
from pi_context.session.projection import path_settings, stream_positions
from pi_context.tokens import estimate_tokens

__all__ = ["context_command", "info_command", "session_group", "tree_command"]


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


def _kinds(tree: EntryTree) -> dict[str, int]:
    """How many entries of each type, messages by role (``message:user``), sorted by name."""
    everything = range(len(tree))
    pairs = Counter(zip(map(tree.type_at, everything), map(tree.role_at, everything), strict=True))
    kinds: Counter[str] = Counter()
    for (kind, role), count in pairs.items():
        if kind != "message":
            kinds[kind] += count
        elif role is not None:
            kinds[f"message:{role}"] += count
    if pairs["message", None]:  # the role is not known without reading the entry
        for position in everything:
            if tree.type_at(position) == "message" and tree.role_at(position) is None:
                message = tree.entry(position).peek().get("message")
                kinds[f"message:{message.get('role') if isinstance(message, dict) else None}"] += 1
    return dict(sorted(kinds.items()))


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


def _context_summary(tree: EntryTree, path: Sequence[int]) -> _ContextSummary:
    """Message count and token estimate of the context of ``path``, computed entry by entry
    without keeping the decoded entries (see :func:`stream_positions`)."""
    level, model = path_settings(tree, path)
    count = tokens = 0
    for _, message in stream_positions(tree, path):
        count += 1
        tokens += estimate_tokens(message)
    return _ContextSummary(count, tokens, model, level)


@dataclass(frozen=True, slots=True)
class _Source:
    """A session file as the commands read it: its entries as an
    :class:`~pi_context.session.entry_store.EntryTree` (a loaded session's tree, or a lean
    index of an ordinary file), its current leaf, and what its header and entries say."""

    tree: EntryTree
    leaf: int
    """Position of the current leaf (-1: none)."""
    header: dict[str, Any]
    version: int
    legacy: bool
    cwd: str | None
    name: str | None
    labels: dict[str, str]
    problems: list[str]


def _loaded(session: Session) -> _Source:
    tree = session.tree
    leaf = session.leaf
    position = -1 if leaf is None else tree.position_of(leaf)
    assert position is not None  # the leaf is one of the session's entries
    return _Source(
        tree,
        position,
        session.header,
        session.file_version,
        session.is_legacy,
        session.cwd,
        session.name,
        session.labels,
        [str(p) for p in session.problems],
    )


def _indexed(index: ColumnIndex) -> _Source:
    cwd = index.header.get("cwd")
    return _Source(
        index,
        index.leaf,
        index.header,
        index.version,
        False,
        cwd if isinstance(cwd, str) else None,
        index.name,
        dict(index.labels),
        [],
    )


@contextlib.contextmanager
def _opened(file: Path, strict: bool) -> Iterator[_Source]:
    """The file through a lean index when it is an ordinary file, else loaded in full (see the
    module docstring); both read the same."""
    index = ColumnIndex.open(file, parallel=True)
    if index is None:
        yield _loaded(_open(file, strict))
        return
    with index:
        yield _indexed(index)


def _renamed(tree: EntryTree) -> dict[int, int]:
    """Position → the position its id names, for the entries whose id a later entry repeats
    (any other entry's id names the entry itself)."""
    position_of_id, id_at = tree.position_of_id, tree.id_at
    return {
        position: found
        for position in range(len(tree))
        if (found := position_of_id(id_at(position))) is not None and found != position
    }


def _leaf_count(tree: EntryTree) -> int:
    """How many entries have no child (children hang off ids, as in the tree view)."""
    count = len(tree)
    has_child = bytearray(count)
    for parent in map(tree.parent_position, range(count)):
        if parent >= 0:
            has_child[parent] = 1
    # A parent position is always the one its id names, so only an entry without children of
    # its own can be one whose id a later entry repeats (and has children through).
    named = _renamed(tree).get
    return sum(
        1
        for position in range(count)
        if not has_child[position] and not has_child[named(position, position)]
    )


@dataclass(frozen=True, slots=True)
class _Facts:
    """What ``session info`` shows."""

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


def _facts(source: _Source) -> _Facts:
    tree = source.tree
    path = path_positions(tree, source.leaf)
    return _Facts(
        header=source.header,
        version=source.version,
        legacy=source.legacy,
        cwd=source.cwd,
        name=source.name,
        entries=len(tree),
        kinds=_kinds(tree),
        leaves=_leaf_count(tree),
        leaf_id=tree.entry(source.leaf).id if source.leaf >= 0 else None,
        path_length=len(path),
        context=_context_summary(tree, path),
        labels=source.labels,
        problems=source.problems,
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
    with _opened(file, strict) as source:
        facts = _facts(source)
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
    roots: Sequence[int], children: Callable[[int], Sequence[int]], key: Callable[[int], int]
) -> Iterator[tuple[int, int, str]]:
    """Each node (a position) of the forest with its depth and drawing prefix, in preorder;
    indentation grows only where the tree branches.

    Linear in the nodes yielded, whatever the depth (an explicit stack): a node whose ``key`` (a
    position, not negative) is already open on the way down is yielded but not expanded again,
    so a cycle ends there.
    """
    open_keys: set[int] = set()
    stack: list[tuple[int, int, str, str] | int] = []  # an int ~key: that key is closed
    for number, root in enumerate(reversed(roots)):
        last = number == 0
        prefix = "" if len(roots) == 1 else ("└─ " if last else "├─ ")
        rest = "" if len(roots) == 1 else ("   " if last else "│  ")
        stack.append((root, 0, prefix, rest))
    while stack:
        item = stack.pop()
        if isinstance(item, int):
            open_keys.discard(~item)
            continue
        node, depth, prefix, rest = item
        yield node, depth, prefix
        name = key(node)
        if name in open_keys:
            continue
        open_keys.add(name)
        stack.append(~name)
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


def _tree_lines(source: _Source) -> Iterator[str]:
    """Render the forest (:func:`_forest_walk`); children hang off ids, as in pi (an entry
    whose id a later entry repeats shows that id's children). An entry is on the current path
    when it stands at its depth on that path, so no set of path entries is built."""
    tree = source.tree
    starts, kids = child_positions(tree)
    path = path_positions(tree, source.leaf)
    labels = source.labels
    renamed = _renamed(tree).get

    def named(position: int) -> int:
        return renamed(position, position)

    def children(position: int) -> Sequence[int]:
        at = renamed(position, position)
        return kids[starts[at] : starts[at + 1]]

    roots = [p for p in range(len(tree)) if tree.parent_position(p) < 0]
    for position, depth, prefix in _forest_walk(roots, children, named):
        entry = tree.entry(position)
        on_path = depth < len(path) and path[depth] == position
        yield _tree_line(entry, on_path, prefix, labels.get(entry.id), position == source.leaf)


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
    with _opened(file, strict) as source:
        for line in _tree_lines(source):
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
    with _opened(file, strict) as source:
        tree = source.tree
        leaf = source.leaf if leaf_id is None else tree.position_of_id(leaf_id)
        if leaf is None:
            raise TreeError(f"no entry with id {leaf_id!r}", path=file)
        _print_context(tree, path_positions(tree, leaf), as_json)


def _print_context(tree: EntryTree, path: Sequence[int], as_json: bool) -> None:
    level, model = path_settings(tree, path)
    leaf_id = tree.entry(path[-1]).id if path else None
    head = {"leafId": leaf_id, "model": model, "thinkingLevel": level}
    # Rows are written as they are projected (entry by entry), never all held at once.
    rows = (
        (entry.id, estimate_tokens(message), converted[0])
        for entry, message in stream_positions(tree, path)
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
