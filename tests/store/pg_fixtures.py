"""The PostgreSQL of the tests (the store's and the CLI's): one server for the whole run, started on
first use and stopped at the end (registered in tests/conftest.py).

Without server binaries the PostgreSQL tests are skipped with the reason, except under
``CI=true``, where a missing server fails them.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.store.pg_server import PgServer, running_server

if TYPE_CHECKING:
    from pi_context.store import SessionStore

STORE_KINDS = ("memory", "file", "postgres")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    with running_server() as server:
        if isinstance(server, str):
            if os.environ.get("CI") == "true":
                pytest.fail(f"PostgreSQL is required under CI=true: {server}")
            pytest.skip(f"PostgreSQL tests skipped: {server}")
        yield server


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """The URL of a fresh, empty database of the test server."""
    return pg_server.url(pg_server.new_database())


@pytest.fixture(params=STORE_KINDS)
async def each_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    """A migrated, empty store of each kind in turn: in memory, pi files, PostgreSQL."""
    from pi_context.store import open_store

    if request.param == "memory":
        url = "memory:"
    elif request.param == "file":
        url = f"file:{tmp_path / 'sessions'}"
    else:
        url = request.getfixturevalue("pg_url")
    opened = await open_store(url)
    await opened.migrate()
    try:
        yield opened
    finally:
        await opened.aclose()
