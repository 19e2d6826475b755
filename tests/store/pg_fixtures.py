"""The PostgreSQL of the tests (the store's and the CLI's): one server for the whole run, started on
first use and stopped at the end (registered in tests/conftest.py).

Without server binaries the PostgreSQL tests are skipped with the reason, except under
``CI=true``, where a missing server fails them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.store.pg_server import PgServer, running_server


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
