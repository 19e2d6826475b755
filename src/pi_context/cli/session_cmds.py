"""``pictx session info|tree|context FILE``: look into a pi session file without changing it.

Lines the loader skipped (malformed or torn) are printed to stderr as warnings; ``--strict``
turns them into an error. A file that is not a session fails with one line naming the file
and line.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from pi_context import _json
from pi_context.errors import SessionFormatError, TreeError
from pi_context.messages import text_of
from pi_context.session import Entry, Session, convert_to_llm
from pi_context.tokens import estimate_tokens

__all__ = ["context_command", "info_command", "register", "session_group", "tree_command"]

_FILE = click.Path(exists=False, dir_okay=False, path_type=Path)


def _open(path: Path, strict: bool) -> Session:
    session = Session.open(path, lock_timeout=0)
    for problem in session.check() if strict else session.problems:
        if strict:
            raise SessionFormatError(problem.error, path=problem.path, line=problem.line)
        click.echo(f"pictx: warning: {problem}", err=True)
    return session


def _print_json(value: Any) -> None:
    sys.stdout.buffer.write(_json.dumps(value) + b"\n")
    sys.stdout.flush()


def _snippet(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _kind(entry: Entry) -> str:
    if entry.type == "message":
        message = entry.message
        role = message.get("role") if message is not None else None
        return f"message:{role}"
    return entry.type


def _describe(entry: Entry) -> str:
    """A short human description of an entry for the tree view."""
    kind = entry.type
    if kind == "message":
        message: dict[str, Any] = dict(entry.message or {})
        role = str(message.get("role"))
        if role == "assistant":
            content = message.get("content")
            calls = [
                b.get("name")
                for b in content or []
                if isinstance(b, dict) and b.get("type") == "toolCall"
            ]
            text = text_of(content if isinstance(content, list) else None, " ")
            extra = f" → {', '.join(map(str, calls))}" if calls else ""
            return f"assistant: {_snippet(text)}{extra}"
        if role == "toolResult":
            return f"toolResult {message.get('toolName')}: {_snippet(text_of(message.get('content'), ' '))}"
        if role == "bashExecution":
            return f"bash: {_snippet(str(message.get('command')))}"
        if role == "system":
            sections = message.get("sections")
            names = ", ".join(sections) if isinstance(sections, dict) else ""
            return f"system [{names}]"
        return f"{role}: {_snippet(text_of(message.get('content'), ' '))}"
    if kind == "compaction":
        return (
            f"[compaction] keeps from {entry.get('firstKeptEntryId')}, "
            f"{entry.get('tokensBefore')} tokens before: {_snippet(str(entry.get('summary')))}"
        )
    if kind == "branch_summary":
        return f"[branch summary] from {entry.get('fromId')}: {_snippet(str(entry.get('summary')))}"
    if kind == "model_change":
        return f"model → {entry.get('provider')}/{entry.get('modelId')}"
    if kind == "thinking_level_change":
        return f"thinking → {entry.get('thinkingLevel')}"
    if kind == "context_edit":
        action = "omit" if entry.get("replacement") is None else "replace"
        return f"context edit: {action} {entry.get('targetId')}"
    if kind == "label":
        return f"label {entry.get('targetId')} = {entry.get('label')!r}"
    if kind == "session_info":
        return f"name = {entry.get('name')!r}"
    if kind == "custom_message":
        return f"custom message {entry.get('customType')}: {_snippet(text_of(entry.get('content'), ' '))}"
    if kind == "custom":
        return f"custom {entry.get('customType')}"
    if kind == "usage":
        return f"usage {entry.get('kind')} {entry.get('provider')}/{entry.get('model')}"
    return f"{kind} (not interpreted)"


@click.group("session")
def session_group() -> None:
    """Inspect pi session files (never modifies them)."""


@session_group.command("info")
@click.argument("file", type=_FILE)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--strict", is_flag=True, help="Decode every line; fail on any malformed or torn one."
)
def info_command(file: Path, as_json: bool, strict: bool) -> None:
    """Summary of a session: header, name, entry counts, branches, current leaf, context size."""
    session = _open(file, strict)
    projection = session.stored_projection()
    tokens = sum(estimate_tokens(m) for m in projection.messages)
    kinds = dict(sorted(Counter(_kind(e) for e in session.entries).items()))
    info = {
        "file": str(file),
        "id": session.id,
        "version": session.file_version,
        "cwd": session.cwd,
        "created": session.header.get("timestamp"),
        "parentSession": session.header.get("parentSession"),
        "name": session.name,
        "entries": len(session.entries),
        "kinds": kinds,
        "leaves": len(session.leaves()),
        "leafId": session.leaf_id,
        "pathLength": len(session.branch_view()),
        "contextMessages": len(projection.messages),
        "contextTokens": tokens,
        "model": projection.model,
        "thinkingLevel": projection.thinking_level,
        "labels": session.labels,
        "problems": [str(p) for p in session.problems],
    }
    if as_json:
        _print_json(info)
        return
    model = projection.model
    lines = [
        f"file:          {file}",
        f"session:       {session.id} (v{session.file_version}"
        + (", migrated to v3 in memory; rewritten on first append)" if session.is_legacy else ")"),
        f"name:          {session.name or '-'}",
        f"cwd:           {session.cwd}",
        f"created:       {session.header.get('timestamp')}",
    ]
    if session.header.get("parentSession"):
        lines.append(f"forked from:   {session.header.get('parentSession')}")
    lines += [
        f"entries:       {len(session.entries)} ("
        + ", ".join(f"{k} {v}" for k, v in kinds.items())
        + ")",
        f"branches:      {len(session.leaves())} leaves; current leaf {session.leaf_id or '-'}",
        f"context:       {len(projection.messages)} messages, ~{tokens} tokens (chars/4)",
        f"model:         {model['provider'] + '/' + model['modelId'] if model else '-'}",
        f"thinking:      {projection.thinking_level}",
        f"labels:        {len(session.labels)}",
    ]
    if session.problems:
        lines.append(f"problems:      {len(session.problems)} skipped line(s)")
    click.echo("\n".join(lines))


def _tree_lines(session: Session) -> Iterator[str]:
    """Render the forest; indentation grows only where the tree branches."""
    tree = session.tree
    children = tree.children_map
    on_path = {id(e) for e in session.branch_view()}
    leaf = session.leaf
    labels = tree.labels
    stack: list[tuple[Entry, str, str, frozenset[str]]] = []
    roots = tree.roots()
    for index, root in enumerate(reversed(roots)):
        last = index == 0
        prefix = "" if len(roots) == 1 else ("└─ " if last else "├─ ")
        rest = "" if len(roots) == 1 else ("   " if last else "│  ")
        stack.append((root, prefix, rest, frozenset()))
    while stack:
        entry, prefix, rest, ancestors = stack.pop()
        mark = "*" if id(entry) in on_path else " "
        try:
            description = _describe(entry)
        except SessionFormatError as exc:
            description = f"(unreadable: {exc.reason})"
        text = f"{mark} {prefix}{entry.id} {description}"
        label = labels.get(entry.id)
        if label:
            text += f"  [{label}]"
        if entry is leaf:
            text += "  ← leaf"
        yield text
        if entry.id in ancestors:
            continue
        below = ancestors | {entry.id}
        kids = children.get(entry.id, [])
        if len(kids) == 1:
            stack.append((kids[0], rest, rest, below))
            continue
        for index, child in enumerate(reversed(kids)):
            last = index == 0
            stack.append(
                (child, rest + ("└─ " if last else "├─ "), rest + ("   " if last else "│  "), below)
            )


@session_group.command("tree")
@click.argument("file", type=_FILE)
@click.option(
    "--strict", is_flag=True, help="Decode every line; fail on any malformed or torn one."
)
def tree_command(file: Path, strict: bool) -> None:
    """The entry tree: branches, labels, compaction and branch-summary markers, current leaf.

    ``*`` marks the current path; ``← leaf`` the current leaf.
    """
    session = _open(file, strict)
    out = sys.stdout
    for line in _tree_lines(session):
        out.write(line + "\n")
    out.flush()


@session_group.command("context")
@click.argument("file", type=_FILE)
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
    user messages), ``tokens`` pi's estimate for it.
    """
    session = _open(file, strict)
    if leaf_id is not None and session.get(leaf_id) is None:
        raise TreeError(f"no entry with id {leaf_id!r}", path=file)
    projection = session.stored_projection(leaf_id)
    rows: list[dict[str, Any]] = []
    for projected in projection.entries:
        for message in projected.messages:
            converted = convert_to_llm([message])
            if not converted:
                continue
            rows.append(
                {
                    "entryId": projected.entry.id,
                    "tokens": estimate_tokens(message),
                    "message": converted[0],
                }
            )
    if as_json:
        _print_json(
            {
                "leafId": projection.leaf_id,
                "model": projection.model,
                "thinkingLevel": projection.thinking_level,
                "messages": rows,
            }
        )
        return
    total = 0
    for row in rows:
        message = row["message"]
        total += row["tokens"]
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
            text = text_of(message.get("content"), " ")
        click.echo(f"{row['entryId']}  {role:<10} {row['tokens']:>6}  {_snippet(text, 70)}")
    model = projection.model
    click.echo(
        f"-- leaf {projection.leaf_id or '-'}: {len(rows)} messages, ~{total} tokens; "
        f"model {model['provider'] + '/' + model['modelId'] if model else '-'}; "
        f"thinking {projection.thinking_level}"
    )


def register(group: click.Group) -> None:
    """Add ``pictx session`` to the ``pictx`` group."""
    group.add_command(session_group)
