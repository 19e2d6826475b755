"""The PostgreSQL store behind pgbouncer in transaction mode (a server connection per
transaction, so no session state and no prepared statement may outlive a statement).

pgbouncer runs as the unprivileged user the test server runs as, on a Unix socket of its own.
Without the ``pgbouncer`` binary the test is skipped with the reason, except under
``CI=true`` (where ``.ci/run`` installs it), where a missing binary fails it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_context.store import LeafMovedError, SessionBusyError, SessionRef, open_store
from tests.store.helpers import message
from tests.store.pg_server import PgServer

PORT = 6439


def _binary() -> str | None:
    return shutil.which("pgbouncer") or next(
        (p for p in ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer") if Path(p).is_file()), None
    )


@pytest.fixture
def bouncer_url(pg_server: PgServer) -> Iterator[str]:
    """A fresh database of the test server, reached through pgbouncer (transaction mode)."""
    binary = _binary()
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("pgbouncer is required under CI=true (.ci/run installs it)")
        pytest.skip("pgbouncer tests skipped: no pgbouncer binary on this machine")
    database = pg_server.new_database()
    root = Path(tempfile.mkdtemp(prefix="pictx-bouncer-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        as_user = ["runuser", "-u", "nobody", "--"]
        shutil.chown(root, user="nobody")
    config = root / "pgbouncer.ini"
    config.write_text(
        "[databases]\n"
        f"{database} = host={pg_server.socket_dir} dbname={database} "
        f"user={pg_server.superuser}\n"
        "[pgbouncer]\n"
        "listen_addr =\n"
        f"listen_port = {PORT}\n"
        f"unix_socket_dir = {root}\n"
        "auth_type = any\n"
        "pool_mode = transaction\n"
        "default_pool_size = 4\n"
        "max_client_conn = 100\n"
        f"logfile = {root / 'pgbouncer.log'}\n"
    )
    process = subprocess.Popen(
        [*as_user, binary, str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        socket = root / f".s.PGSQL.{PORT}"
        deadline = time.monotonic() + 30
        while not socket.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                error = process.stderr.read().decode() if process.stderr else ""
                log = (
                    (root / "pgbouncer.log").read_text()
                    if (root / "pgbouncer.log").exists()
                    else ""
                )
                pytest.fail(f"pgbouncer did not start: {error} {log}")
            time.sleep(0.05)
        yield f"postgresql://{pg_server.superuser}@/{database}?host={root}&port={PORT}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()
        shutil.rmtree(root, ignore_errors=True)


async def test_every_operation_works_through_pgbouncer_in_transaction_mode(
    bouncer_url: str,
) -> None:
    stores = [await open_store(bouncer_url, max_connections=4) for _ in range(2)]
    first, second = stores
    try:
        await asyncio.gather(first.migrate(), second.migrate())
        ref = await first.create(tenant="acme", cwd="/w", session_id="bounced")
        await first.append(ref, [message("u1", None, "user", "tag the release")])

        # many writers on many sessions at once: statements of each store's pooled
        # connections land on whichever server connection pgbouncer gives them
        async def writer(n: int) -> None:
            own = await second.create(tenant="acme", cwd="/w", session_id=f"w{n}")
            leaf: str | None = None
            for turn in range(5):
                user = message(f"{n}-{turn}-u", leaf, "user", f"question {turn}")
                reply = message(f"{n}-{turn}-a", user["id"], "assistant", f"answer {turn}")
                leaf = (await second.append(own, [user, reply], if_leaf=leaf)).leaf_id

        await asyncio.gather(*(writer(n) for n in range(6)))
        for n in range(6):
            stored = await first.load(SessionRef("acme", f"w{n}"))
            assert len(stored.entries) == 10
            assert stored.session().problems == []
        result = await second.append(
            ref, [message("a1", "u1", "assistant", "tagged v1.2")], if_leaf="u1"
        )
        assert result.seqs == (2,)
        with pytest.raises(LeafMovedError):
            await first.append(ref, [message("a2", "u1", "assistant", "late")], if_leaf="u1")
        assert [e["id"] for e in (await first.load(ref)).entries] == ["u1", "a1"]
        assert [h.id for h in await first.search(ref, "release")] == ["u1"]
        wide = await second.search_tenant("acme", "answer", limit=50)
        assert len(wide) == 30
        async with first.lease(ref, owner="replica-1", ttl=30):
            with pytest.raises(SessionBusyError):
                async with second.lease(ref, owner="replica-2", ttl=30):
                    pass
        async with second.lease(ref, owner="replica-2", ttl=30):
            pass
        page = await first.list_sessions(tenant="acme", limit=100)
        assert len(page.sessions) == 7
        await first.delete(ref)
        assert len((await second.list_sessions(tenant="acme", limit=100)).sessions) == 6
    finally:
        for store in stores:
            await store.aclose()
