"""``pictx store migrate|import|export|ls URL``: a session store from the command line; and
``URL#ID``, a stored session where ``pictx session info|tree|context|search`` take a FILE.

``URL`` is what :func:`pi_context.store.open_store` takes: ``postgresql://...`` (credentials
from the URL or libpq's ``PG*`` variables), ``file:DIR`` or a directory. Errors are one line
without a password (the store's own errors say so).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click

from pi_context.cli.terminal_text import echo, terminal_safe
from pi_context.store import SessionRef, SessionStore, open_store

__all__ = ["session_argument", "store_group", "stored_session_url"]

_T = TypeVar("_T")

_TENANT = click.option(
    "--tenant", default="", show_default=False, help="The tenant (default: none)."
)


def _run(url: str, work: Callable[[SessionStore], Awaitable[_T]]) -> _T:
    async def go() -> _T:
        store = await open_store(url)
        try:
            return await work(store)
        finally:
            await store.aclose()

    return asyncio.run(go())


@click.group(name="store", context_settings={"help_option_names": ["-h", "--help"]})
def store_group() -> None:
    """Session stores: create the schema, import, export and list sessions."""


@store_group.command(name="migrate")
@click.argument("url")
def migrate_command(url: str) -> None:
    """Create or upgrade the store's schema (idempotent; safe from many processes at once)."""
    _run(url, lambda store: store.migrate())
    echo("store schema is up to date")


@store_group.command(name="import")
@click.argument("url")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@_TENANT
def import_command(url: str, files: tuple[Path, ...], tenant: str) -> None:
    """Import pi session FILES as they are (byte for byte); prints each session's id."""

    async def work(store: SessionStore) -> list[tuple[Path, SessionRef]]:
        done = []
        for file in files:
            done.append((file, await store.import_jsonl(file, tenant=tenant)))
        return done

    for file, ref in _run(url, work):
        echo(f"{terminal_safe(str(file))}\t{terminal_safe(ref.id)}")


@store_group.command(name="export")
@click.argument("url")
@click.argument("session_id")
@click.argument("out", type=click.Path(path_type=Path))
@_TENANT
def export_command(url: str, session_id: str, out: Path, tenant: str) -> None:
    """Write session SESSION_ID to OUT as its pi JSONL file."""
    _run(url, lambda store: store.export_jsonl(SessionRef(tenant, session_id), out))


@store_group.command(name="ls")
@click.argument("url")
@_TENANT
@click.option("--limit", default=0, type=int, help="At most this many sessions (0: all).")
def ls_command(url: str, tenant: str, limit: int) -> None:
    """List the tenant's sessions by id: id, lines after the header, current leaf."""

    async def work(store: SessionStore) -> list[tuple[str, int, str | None]]:
        rows: list[tuple[str, int, str | None]] = []
        cursor = None
        while True:
            page = await store.list_sessions(tenant=tenant, limit=100, cursor=cursor)
            rows += [(s.ref.id, s.entries, s.leaf_id) for s in page.sessions]
            cursor = page.cursor
            if cursor is None or (limit and len(rows) >= limit):
                return rows[:limit] if limit else rows

    for session_id, entries, leaf in _run(url, work):
        echo(f"{terminal_safe(session_id)}\t{entries}\t{terminal_safe(leaf or '-')}")


_STORE_URL = re.compile(r"(postgres(?:ql)?://|file:)", re.IGNORECASE)


def stored_session_url(argument: str) -> tuple[str, str] | None:
    """``URL#ID`` split into the store's URL and the session id, or ``None`` when ``argument``
    names a file (an existing path, or anything that is not ``URL#ID``).

    The rule: a store URL (``postgresql://``, ``postgres://``, ``file:``) or an existing
    directory, then ``#`` and the session id. A store URL without ``#ID`` is a
    :class:`click.UsageError` saying so, naming only the URL's scheme (never its password)."""
    if Path(argument).exists():
        return None
    url, sep, session_id = argument.rpartition("#")
    scheme = _STORE_URL.match(argument)
    if scheme is not None:
        if not sep or not session_id or not url:
            raise click.UsageError(
                f"{scheme.group(1)}...: a stored session is named URL#ID "
                "(the store's URL, '#', then the session id)"
            )
        return url, session_id
    if sep and session_id and url and Path(url).is_dir():
        return url, session_id
    return None


@contextlib.contextmanager
def stored_session_file(argument: str, tenant: str) -> Iterator[Path]:
    """``argument`` as a path; or, for ``URL#ID`` (:func:`stored_session_url`) the stored
    session's file bytes in a temporary file, removed after."""
    stored = stored_session_url(argument)
    if stored is None:
        yield Path(argument)
        return
    url, session_id = stored
    data = _run(url, lambda store: store.export_bytes(SessionRef(tenant, session_id)))
    with tempfile.TemporaryDirectory(prefix="pictx-stored-") as folder:
        path = Path(folder) / "session.jsonl"
        path.write_bytes(data)
        yield path


_F = TypeVar("_F", bound=Callable[..., Any])


def session_argument(command: _F) -> _F:
    """The ``FILE`` argument of a session command, also accepting ``URL#ID`` (with
    ``--tenant``): the command receives ``file`` as a path either way."""

    @functools.wraps(command)
    def run(*args: Any, file: str, tenant: str, **kwargs: Any) -> Any:
        with stored_session_file(file, tenant) as path:
            return command(*args, file=path, **kwargs)

    run = click.option(
        "--tenant", default="", help="The tenant of a URL#ID session (default: none)."
    )(run)
    return click.argument("file", type=click.Path(exists=False))(run)  # type: ignore[return-value]
