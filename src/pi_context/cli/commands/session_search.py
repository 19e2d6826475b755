"""``pictx session search FILE QUERY``: ranked hits over a session's whole history.

The file is searched through its index (a cache beside nothing: in the user's cache directory,
caught up with the file or rebuilt when the file no longer matches it), without loading the
session; a legacy (v1/v2) file, whose entry ids exist only once migrated, is loaded and searched
in memory. Text from the file is shown terminal-safe; ``--json`` output escapes control
characters.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from pi_context import _json
from pi_context.cli.commands.store import session_argument
from pi_context.cli.terminal_text import echo, json_for_terminal
from pi_context.errors import SessionError, SessionFormatError
from pi_context.session import SearchHit, SearchIndex, Session
from pi_context.session._load.scan import CURRENT_VERSION
from pi_context.session.search.query import search
from pi_context.session_dirs import read_header

__all__ = ["search_command"]


def _hits(file: Path, query: str, limit: int, all_branches: bool) -> list[SearchHit]:
    header = read_header(file)
    if header is None:
        if not file.exists():
            raise SessionError("no such session file", path=file)
        raise SessionFormatError("not a valid pi session (no session header line)", path=file)
    version = header.get("version")
    if not isinstance(version, int) or version < CURRENT_VERSION:  # no version: v1
        with Session.open(file, lock_timeout=0) as session:
            return session.search(query, limit=limit, all_branches=all_branches)
    index = SearchIndex.for_file(file)
    try:
        index.refresh()
        return search(index, query, limit=limit, all_branches=all_branches)
    finally:
        index.close()


def _line(rank: int, hit: SearchHit) -> str:
    where = "" if hit.on_branch else "  (off the branch)"
    replaced = f"  replaced by {hit.replaced_by}" if hit.replaced_by else ""
    head = f"{rank}. {hit.id}  {hit.role}  {hit.timestamp or '-'}  score {hit.score:.2f}"
    return f"{head}{replaced}{where}\n   {hit.snippet}"


@click.command("search")
@session_argument
@click.argument("query")
@click.option(
    "--limit",
    default=10,
    show_default=True,
    type=click.IntRange(min=1, max=1000),
    help="How many hits to show at most.",
)
@click.option(
    "--all-branches",
    is_flag=True,
    help="Search every branch of the tree, not only the current one.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print {"hits": [{"id", "role", "timestamp", "snippet", "score", "replacedBy"}]}.',
)
def search_command(file: Path, query: str, limit: int, all_branches: bool, as_json: bool) -> None:
    """Search the whole history of FILE for QUERY, best first, saying what replaced each hit.

    Every message entry is searched (user, assistant text, thinking and tool calls, tool
    results, summaries), on the current branch unless --all-branches is given.
    """
    hits = _hits(file, query, limit, all_branches)
    if as_json:
        text = _json.dumps({"hits": [h.to_json() for h in hits]}).decode("utf-8")
        sys.stdout.buffer.write(json_for_terminal(text).encode() + b"\n")
        sys.stdout.flush()
        return
    if not hits:
        echo("no matches")
        return
    for rank, hit in enumerate(hits, 1):
        echo(_line(rank, hit))
