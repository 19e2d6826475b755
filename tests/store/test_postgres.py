"""What only the PostgreSQL store has: its schema, connections, credentials and timeouts."""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import re
from typing import Any, Final

import psycopg
import pytest

from pi_context.errors import StoreError
from pi_context.store import (
    SessionRef,
    StoreSchemaError,
    StoreTimeoutError,
    StoreUnavailableError,
    open_store,
)
from pi_context.store.postgres import SCHEMA_VERSION, PostgresStore
from tests.store.helpers import CONFORMANCE_SESSIONS, message
from tests.store.pg_server import PASSWORD, PgServer


async def _opened(url: str) -> PostgresStore:
    store = await open_store(url)
    assert isinstance(store, PostgresStore)
    return store


async def test_a_database_without_the_schema_names_migrate(pg_url: str) -> None:
    store = await _opened(pg_url)
    try:
        with pytest.raises(StoreSchemaError, match=r"migrate\(\)`? or `pictx store migrate"):
            await store.load(SessionRef("", "x"))
    finally:
        await store.aclose()


async def test_a_newer_schema_is_refused_naming_both_versions(pg_url: str) -> None:
    store = await _opened(pg_url)
    try:
        await store.migrate()
        async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
            await conn.execute("UPDATE pi_store_schema SET version = %s", (SCHEMA_VERSION + 5,))
        newer = await _opened(pg_url)
        try:
            for attempt in (newer.migrate(), newer.load(SessionRef("", "x"))):
                with pytest.raises(StoreSchemaError) as caught:
                    await attempt
                text = str(caught.value)
                assert str(SCHEMA_VERSION + 5) in text
                assert str(SCHEMA_VERSION) in text
        finally:
            await newer.aclose()
    finally:
        await store.aclose()


async def test_many_replicas_migrate_at_once(pg_url: str) -> None:
    stores = [await _opened(pg_url) for _ in range(6)]
    try:
        await asyncio.gather(*(s.migrate() for s in stores))
        await stores[0].migrate()  # and again: idempotent
        async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
            rows = await (await conn.execute("SELECT version FROM pi_store_schema")).fetchall()
        assert rows == [(SCHEMA_VERSION,)]
    finally:
        for store in stores:
            await store.aclose()


async def test_a_wrong_password_is_one_line_without_the_password(
    pg_server: PgServer, caplog: pytest.LogCaptureFixture
) -> None:
    wrong = "Wr0ng-" + PASSWORD[::-1]
    caplog.set_level(logging.DEBUG)
    with pytest.raises(StoreUnavailableError) as caught:
        await open_store(pg_server.password_url(wrong), connect_timeout=5)
    text = str(caught.value)
    assert "\n" not in text
    assert wrong not in text
    assert str(pg_server.socket_dir) in text
    assert "password authentication failed" in text
    assert wrong not in caplog.text
    # the right one connects
    store = await open_store(pg_server.password_url(PASSWORD))
    assert PASSWORD not in store.url
    assert PASSWORD not in repr(store.url)
    await store.aclose()


async def test_a_server_that_does_not_answer_is_named(pg_server: PgServer) -> None:
    url = f"postgresql://u:hunter2@/db?host={pg_server.root / 'nowhere'}"
    with pytest.raises(StoreUnavailableError) as caught:
        await open_store(url, connect_timeout=2)
    assert "nowhere" in str(caught.value)
    assert "hunter2" not in str(caught.value)


async def test_a_url_that_does_not_parse_is_a_clear_error() -> None:
    for url in ("postgresql://u:pa55@[::1/db", "postgresql://u:pa55@/db?bogus=1"):
        with pytest.raises(StoreError, match="not a PostgreSQL URL") as caught:
            await open_store(url)
        assert "pa55" not in str(caught.value)
        assert "\n" not in str(caught.value)
    with pytest.raises(StoreError, match="not a store URL"):
        await open_store("mysql://somewhere/db")


async def test_statement_timeout_is_a_typed_error(pg_url: str) -> None:
    store = await _opened(pg_url)
    await store.migrate()
    ref = await store.create(cwd="/w", session_id="slow")
    await store.append(ref, [message("u1", None, "user", "one")])
    await store.aclose()
    # hold the head row's lock in another connection: the append waits, then times out
    timed = await _opened(pg_url + "&options=-c%20lock_timeout%3D200")
    async with await psycopg.AsyncConnection.connect(pg_url) as blocker:
        await blocker.execute("SELECT 1 FROM pi_sessions WHERE session_id = 'slow' FOR UPDATE")
        try:
            with pytest.raises(StoreTimeoutError, match="lock timeout"):
                await timed.append(ref, [message("a1", "u1", "assistant", "two")])
        finally:
            await blocker.rollback()
    assert [e["id"] for e in (await timed.load(ref)).entries] == ["u1"]
    await timed.aclose()
    slow = await _opened(pg_url + "&options=-c%20statement_timeout%3D100")
    try:
        async with slow._conn() as conn:  # the store's own connection and error mapping
            with (
                pytest.raises(StoreTimeoutError, match="statement timeout"),
                slow._errors(),
            ):
                await conn.execute("SELECT pg_sleep(2)")
    finally:
        await slow.aclose()


async def test_a_terminated_connection_mid_append_is_retried_once(pg_url: str) -> None:
    store = await _opened(pg_url)
    await store.migrate()
    ref = await store.create(cwd="/w", session_id="term")
    await store.append(ref, [message("u1", None, "user", "one")])
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as admin:
        pids = await (
            await admin.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid()"
            )
        ).fetchall()
        assert pids
        for (pid,) in pids:
            await admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    batch = [message("a1", "u1", "assistant", "two"), message("u2", "a1", "user", "three")]
    try:
        result = await store.append(ref, batch)  # the broken pooled connection: retried
    except StoreUnavailableError as exc:
        retryable = exc.retryable
        assert retryable
        result = await store.append(ref, batch)
    assert result.seqs == (2, 3)
    assert await store.append(ref, batch) == result
    ids = [e["id"] for e in (await store.load(ref)).entries]
    assert ids == ["u1", "a1", "u2"]
    await store.aclose()


async def test_an_oversized_text_is_indexed_by_its_head(pg_url: str) -> None:
    store = await _opened(pg_url)
    await store.migrate()
    ref = await store.create(cwd="/w", session_id="big")
    words = " ".join(f"w{i}x" for i in range(400_000))  # ~2.8 MB of distinct words
    entry: dict[str, Any] = message("u1", None, "user", "needle " + words)
    await store.append(ref, [entry])
    hits = await store.search(ref, "needle")
    assert [h.id for h in hits] == ["u1"]
    assert (await store.load(ref)).entries[0] == entry
    await store.aclose()


async def test_row_level_security_keeps_a_non_owner_role_to_one_tenant(
    pg_server: PgServer,
) -> None:
    database = pg_server.new_database()
    owner = await _opened(pg_server.url(database))
    await owner.migrate(row_level_security=True)
    await owner.migrate()  # a replica without the flag leaves it on
    await owner.aclose()
    role = f"app_{database}"
    pg_server.psql(
        f"CREATE ROLE {role} LOGIN; GRANT SELECT, INSERT, UPDATE, DELETE ON pi_sessions, "
        f"pi_entries, pi_leases TO {role}; GRANT SELECT ON pi_store_schema TO {role}",
        database,
    )
    app_url = pg_server.url(database, user=role)
    store = await _opened(app_url)
    try:
        mine = await store.create(tenant="acme", cwd="/w", session_id="shared-id")
        theirs = await store.create(tenant="globex", cwd="/w", session_id="shared-id")
        await store.append(mine, [message("u1", None, "user", "acme's secret plan")])
        await store.append(theirs, [message("u1", None, "user", "globex's secret plan")])
        await store.append(mine, [message("a1", "u1", "assistant", "noted")], if_leaf="u1")
        assert [e["id"] for e in (await store.load(mine)).entries] == ["u1", "a1"]
        hits = await store.search_tenant("acme", "secret plan")
        assert [(h.ref, h.hit.snippet) for h in hits] == [(mine, "acme's secret plan")]
        assert [h.id for h in await store.search(theirs, "secret")] == ["u1"]
        async with store.lease(mine, owner="r1", ttl=30):
            pass
        assert [s.ref for s in (await store.list_sessions(tenant="globex")).sessions] == [theirs]
        with pytest.raises(StoreError, match="one tenant at a time"):
            await store.prune(idle_seconds=3600)
        assert await store.prune(idle_seconds=3600, tenant="acme") == 0
    finally:
        await store.aclose()
    # the same role's own SQL sees only the tenant its transaction names, and writes no other
    async with await psycopg.AsyncConnection.connect(app_url, autocommit=True) as conn:
        count = "SELECT count(*) FROM pi_entries"
        assert await (await conn.execute(count)).fetchone() == (0,)
        async with conn.transaction():
            await conn.execute("SELECT set_config('pi_context.tenant', 'acme', true)")
            rows = await (await conn.execute("SELECT tenant_id, line FROM pi_entries")).fetchall()
            assert {r[0] for r in rows} == {"acme"}
            assert len(rows) == 2
            updated = await conn.execute(
                "UPDATE pi_entries SET line = 'x' WHERE tenant_id = 'globex'"
            )
            assert updated.rowcount == 0
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                await conn.execute(
                    "INSERT INTO pi_sessions (tenant_id, session_id, prefix, tail_newline, "
                    "version) VALUES ('globex', 'sneaky', '{}', true, 3)"
                )
        assert await (await conn.execute(count)).fetchone() == (0,)
    # the owner still sees every tenant
    async with await psycopg.AsyncConnection.connect(
        pg_server.url(database), autocommit=True
    ) as conn:
        assert await (await conn.execute("SELECT count(*) FROM pi_entries")).fetchone() == (3,)


async def test_a_schema_before_the_append_function_appends_until_migrated(pg_url: str) -> None:
    store = await _opened(pg_url)
    try:
        await store.migrate()
        async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
            await conn.execute("DROP FUNCTION pi_append")
            await conn.execute("UPDATE pi_store_schema SET version = 1")
        older = await _opened(pg_url)
        try:
            ref = await older.create(cwd="/w", session_id="old")
            first = await older.append(ref, [message("a", None, "user", "één vraag")], if_leaf=None)
            assert first.seqs == (1,)
            await older.migrate()  # creates the function: the same store now calls it
            async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
                found = await (
                    await conn.execute(
                        "SELECT version, to_regproc('pi_append') IS NOT NULL FROM pi_store_schema"
                    )
                ).fetchall()
            assert found == [(SCHEMA_VERSION, True)]
            second = await older.append(ref, [message("b", "a", "assistant", "antwoord")])
            assert second.seqs == (2,)
            again = await older.append(ref, [message("b", "a", "assistant", "antwoord")])
            assert again == second  # a retry by id
            lines = (await older.load(ref)).entries
            assert [e["id"] for e in lines] == ["a", "b"]
        finally:
            await older.aclose()
    finally:
        await store.aclose()


async def test_migrate_replaces_a_version_2_append_function(pg_url: str) -> None:
    # version 2's function looked ids up with ``= ANY(array)`` (a plan that could read the
    # whole session); migrating replaces it with the one that looks each id up by its key
    store = await _opened(pg_url)
    try:
        await store.migrate()
        ref = await store.create(cwd="/w", session_id="v2")
        first = await store.append(ref, [message("a", None, "user", "q")], if_leaf=None)
        async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
            await conn.execute("UPDATE pi_store_schema SET version = 2")
            await conn.execute(
                "UPDATE pg_proc SET prosrc = replace(prosrc, 'e.entry_id = p.id', "
                "'e.entry_id = ANY(ARRAY[p.id])') WHERE proname = 'pi_append'"
            )
        await store.migrate()
        async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
            found = await (
                await conn.execute(
                    "SELECT s.version, p.prosrc LIKE '%ANY(%', p.proconfig "
                    "FROM pi_store_schema s, pg_proc p WHERE p.proname = 'pi_append'"
                )
            ).fetchall()
        # and its plan is made once per connection (the generic one), not on every call
        assert found == [(SCHEMA_VERSION, False, ["plan_cache_mode=force_generic_plan"])]
        await store.migrate()  # again: nothing changes
        second = await store.append(ref, [message("b", "a", "assistant", "r")], if_leaf="a")
        assert (first.seqs, second.seqs) == ((1,), (2,))
        assert await store.append(ref, [message("b", "a", "assistant", "r")]) == second
    finally:
        await store.aclose()


async def _head_schema(url: str) -> tuple[Any, ...]:
    """The schema version, ``pi_sessions``' indexes, its storage options and whether it has
    the column ``updated_minute``."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        row = await (
            await conn.execute(
                "SELECT (SELECT version FROM pi_store_schema), "
                "(SELECT array_agg(indexname::text ORDER BY indexname) FROM pg_indexes "
                " WHERE tablename = 'pi_sessions'), "
                "(SELECT reloptions FROM pg_class WHERE relname = 'pi_sessions'), "
                "EXISTS (SELECT 1 FROM information_schema.columns "
                " WHERE table_name = 'pi_sessions' AND column_name = 'updated_minute')"
            )
        ).fetchone()
    assert row is not None
    return tuple(row)


_PLAIN_KEY: Final = (
    "CREATE UNIQUE INDEX pi_entries_pkey ON public.pi_entries "
    "USING btree (tenant_id, session_id, seq)"
)
_COVERING_KEY: Final = _PLAIN_KEY + " INCLUDE (entry_id, parent_id, type, ref)"


async def _entries_key(url: str) -> tuple[Any, ...]:
    """The schema version, the primary key of ``pi_entries`` (its constraint's index, as
    ``CREATE INDEX``) and the names of the table's indexes."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        row = await (
            await conn.execute(
                "SELECT (SELECT version FROM pi_store_schema), "
                "(SELECT pg_get_indexdef(conindid) FROM pg_constraint "
                " WHERE conrelid = 'pi_entries'::regclass AND contype = 'p'), "
                "(SELECT array_agg(indexname::text ORDER BY indexname) FROM pg_indexes "
                " WHERE tablename = 'pi_entries')"
            )
        ).fetchone()
    assert row is not None
    return tuple(row)


async def _as_version_3(url: str) -> None:
    """Turn a migrated database back into the schema of version 3: ``updated_at`` indexed,
    no ``updated_minute``, pages filled, an append function that sets ``updated_at`` only."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        for statement in (
            "DROP INDEX pi_sessions_idle",
            "ALTER TABLE pi_sessions DROP COLUMN updated_minute",
            "ALTER TABLE pi_sessions RESET (fillfactor)",
            "CREATE INDEX pi_sessions_updated ON pi_sessions (updated_at)",
            r"UPDATE pg_proc SET prosrc = regexp_replace(prosrc, ',\s*updated_minute = [^\n]*', "
            "'') WHERE proname = 'pi_append'",
            "UPDATE pi_store_schema SET version = 3",
        ):
            await conn.execute(statement)


async def _minutes(url: str) -> dict[str, tuple[Any, Any]]:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        rows = await (
            await conn.execute("SELECT session_id, updated_minute, updated_at FROM pi_sessions")
        ).fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


async def test_migrate_upgrades_a_version_3_database(pg_url: str) -> None:
    store = await _opened(pg_url)
    try:
        await store.migrate()
        quiet = await store.create(cwd="/w", session_id="quiet")
        await store.append(quiet, [message("q", None, "user", "q")], if_leaf=None)
        busy = await store.create(cwd="/w", session_id="busy")
    finally:
        await store.aclose()
    await _as_version_3(pg_url)
    assert await _head_schema(pg_url) == (
        3,
        ["pi_sessions_pkey", "pi_sessions_updated"],
        None,
        False,
    )
    older = await _opened(pg_url)  # not migrated yet: appends and prunes on version 3
    try:
        first = await older.append(busy, [message("a", None, "user", "q")], if_leaf=None)
        assert await older.prune(idle_seconds=3600) == 0
        await older.migrate()
        migrated = (4, ["pi_sessions_idle", "pi_sessions_pkey"], ["fillfactor=50"], True)
        assert await _head_schema(pg_url) == migrated
        minutes = await _minutes(pg_url)
        assert minutes["quiet"][0] is None
        assert minutes["busy"][0] is None
        second = await older.append(busy, [message("b", "a", "assistant", "r")], if_leaf="a")
        assert (first.seqs, second.seqs) == ((1,), (2,))
        assert await older.append(busy, [message("b", "a", "assistant", "r")]) == second
        minute, written = (await _minutes(pg_url))["busy"]
        assert minute is not None
        assert minute <= written
        assert minute.second == 0
        assert minute.microsecond == 0
        await older.migrate()  # again: nothing changes
        assert await _head_schema(pg_url) == migrated
        assert [e["id"] for e in (await older.load(quiet)).entries] == ["q"]
        assert await older.prune(idle_seconds=3600) == 0
        await asyncio.sleep(0.05)
        # the session without a minute (not written since the upgrade) is found too
        assert await older.prune(idle_seconds=0.01) == 2
        assert await _minutes(pg_url) == {}
    finally:
        await older.aclose()


async def _with_plain_key(url: str) -> None:
    """The entries' primary key made plain, as an earlier version created it."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(
            "CREATE UNIQUE INDEX pi_entries_plain ON pi_entries (tenant_id, session_id, seq)"
        )
        await conn.execute(
            "ALTER TABLE pi_entries DROP CONSTRAINT pi_entries_pkey, "
            "ADD CONSTRAINT pi_entries_pkey PRIMARY KEY USING INDEX pi_entries_plain"
        )


async def test_a_new_database_gets_the_covering_key(pg_url: str) -> None:
    store = await _opened(pg_url)
    try:
        await store.migrate()
        key = await _entries_key(pg_url)
        assert key == (
            SCHEMA_VERSION,
            _COVERING_KEY,
            ["pi_entries_id", "pi_entries_pkey", "pi_entries_tsv"],
        )
    finally:
        await store.aclose()


async def test_migrate_with_covering_key_swaps_the_entries_key_in_once(pg_url: str) -> None:
    indexes = ["pi_entries_id", "pi_entries_pkey", "pi_entries_tsv"]
    store = await _opened(pg_url)
    try:
        await store.migrate()
        await _with_plain_key(pg_url)  # a table an earlier version made
        await store.migrate()  # without the flag: the plain key stays
        assert await _entries_key(pg_url) == (SCHEMA_VERSION, _PLAIN_KEY, indexes)
        ref = await store.create(tenant="acme", cwd="/w", session_id="kept")
        await store.append(ref, [message("a", None, "user", "alpha question")], if_leaf=None)
        await store.append(ref, [message("b", "a", "assistant", "alpha answer")], if_leaf="a")
        await store.append(ref, [message("c", "b", "user", "alpha again")], if_leaf="b")
        before = await store.search_tenant("acme", "alpha")
        assert len(before) == 3
        await store.migrate(covering_key=True)
        assert await _entries_key(pg_url) == (SCHEMA_VERSION, _COVERING_KEY, indexes)
        assert await store.search_tenant("acme", "alpha") == before
        await store.append(ref, [message("d", "c", "assistant", "r")], if_leaf="c")
        with pytest.raises(psycopg.errors.UniqueViolation):  # still the key: a seq once
            async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
                await conn.execute(
                    "INSERT INTO pi_entries (tenant_id, session_id, seq, line) "
                    "VALUES ('acme', 'kept', 1, '{}')"
                )
        await store.migrate(covering_key=True)  # again: nothing changes
        await store.migrate()  # nor without it: the key stays
        assert await _entries_key(pg_url) == (SCHEMA_VERSION, _COVERING_KEY, indexes)
        loaded = await store.load(ref)
        assert [e["id"] for e in loaded.entries] == ["a", "b", "c", "d"]
    finally:
        await store.aclose()


async def test_a_tenant_search_reads_the_structure_from_the_key_alone(pg_url: str) -> None:
    # after a vacuum, the structure read is an index-only scan of the primary key
    store = await _opened(pg_url)
    try:
        await store.migrate(covering_key=True)
        ref = await store.create(tenant="acme", cwd="/w", session_id="s")
        leaf = None
        for n in range(50):
            entry = message(f"m{n}", leaf, "user", f"word{n} common")
            leaf = (await store.append(ref, [entry], if_leaf=leaf)).leaf_id
    finally:
        await store.aclose()
    from pi_context.store.postgres import _TENANT_BATCH

    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
        await conn.execute("VACUUM (ANALYZE) pi_entries")
        await conn.execute("SET enable_seqscan = off")
        await conn.execute("SET enable_bitmapscan = off")
        sql = _TENANT_BATCH.replace("%(sids)s", "ARRAY['s']").replace("%(t)s", "'acme'")
        sql = sql.replace("%(key_sids)s", "ARRAY['s']").replace("%(key_seqs)s", "ARRAY['3']")
        rows = await (await conn.execute(f"EXPLAIN (ANALYZE, COSTS OFF) {sql}")).fetchall()
    plan = "\n".join(r[0] for r in rows)
    assert re.search(r"Index Only Scan using pi_entries_pkey", plan), plan
    assert re.search(r"Heap Fetches: 0\b", plan), plan


async def test_an_append_updates_the_head_row_in_place(pg_url: str) -> None:
    # HOT: no indexed column of the head row changes (the minute aside), so PostgreSQL
    # writes each new version beside the old one without touching an index
    store = await _opened(pg_url)
    try:
        await store.migrate()
        ref = await store.create(cwd="/w", session_id="hot")
        leaf = None
        for n in range(20):
            result = await store.append(ref, [message(f"m{n}", leaf, "user", "q")], if_leaf=leaf)
            leaf = result.leaf_id
    finally:
        await store.aclose()  # its backends end and report their counts
    row: tuple[Any, ...] | None = None
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
        for _ in range(600):
            row = await (
                await conn.execute(
                    "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables "
                    "WHERE relname = 'pi_sessions'"
                )
            ).fetchone()
            assert row is not None
            if row[0] >= 20:
                break
            await asyncio.sleep(0.1)
    # the minute may have turned once during the appends
    assert row is not None
    assert row[0] == 20
    assert row[1] >= 19


async def test_text_arrays_go_over_binary_with_nulls_and_any_text(pg_url: str) -> None:
    from pi_context.store.postgres import _configure, _TextArray

    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
        await _configure(conn)
        values = _TextArray(["plain", None, "", 'quo"te,{}\\', "ünï😀"])
        cursor = await conn.execute(
            "SELECT %(v)b, cardinality(%(v)b), array_position(%(v)b, NULL), %(e)b, "
            "pg_typeof(%(e)b)::text",
            {"v": values, "e": _TextArray([])},
        )
        row = await cursor.fetchone()
    assert row == (list(values), 5, 2, [], "text[]")


def test_a_session_structure_read_as_arrays_is_put_in_seq_order() -> None:
    from pi_context.store.postgres import _structure

    structure = _structure(
        [
            [3, 1, 2, 4],
            ["c", "a", "b", "a"],
            ["b", None, "a", "c"],
            ["message", "session_info", "message", "message"],
            ["user", None, "assistant", "user"],
            ["t3", "t1", "t2", "t4"],
            [None, None, None, "r"],
        ]
    )
    assert structure.ids == ["a", "b", "c", "a"]
    assert structure.parents == [None, "a", "b", "c"]
    assert structure.types == ["session_info", "message", "message", "message"]
    assert structure.roles == [None, "assistant", "user", "user"]
    assert structure.timestamps == ["t1", "t2", "t3", "t4"]
    assert structure.refs == [None, None, None, "r"]
    assert structure.by_id == {"a": 3, "b": 1, "c": 2}  # the later row of a repeated id


def test_a_session_with_no_entries_left_has_an_empty_structure() -> None:
    from pi_context.store.postgres import _structure

    assert len(_structure([None] * 7)) == 0


def test_a_load_reads_the_rows_as_the_files_lines() -> None:
    from pi_context.store.postgres import _lines_of

    header = '{"type":"session","id":"s"}'
    rows: list[Any] = [(2, b"b", None, None), (1, b"a", "pre\n" + header, True)]
    assert _lines_of(rows) == [b"pre", header.encode(), b"a", b"b", b""]
    rows = [(2, b"b", None, None), (1, b"a", header, False)]
    assert _lines_of(rows) == [header.encode(), b"a", b"b"]
    assert _lines_of([(None, None, "header", True)]) == [b"header", b""]


async def test_a_loaded_session_holds_its_lines_until_its_bytes_are_read(pg_url: str) -> None:
    import json

    from pi_context.session._load.scan import SplitBytes

    lines = [{"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}]
    lines += [message(f"e{n}", f"e{n - 1}" if n else None, "user", f"hi {n}") for n in range(3)]
    data = b"junk\n" + b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    store = await _opened(pg_url)
    try:
        await store.migrate()
        ref = await store.import_bytes(data)
        loaded = await store.load(ref)
        assert isinstance(loaded._data, SplitBytes)
        assert loaded.size == len(data)
        assert [e["id"] for e in loaded.entries] == ["e0", "e1", "e2"]
        assert loaded.data == data
        assert loaded.data is loaded.data  # joined once
        assert loaded.scan.size == len(data)
    finally:
        await store.aclose()


def _file_of(rows: list[Any]) -> bytes:
    from pi_context.store.postgres import _lines_of

    return b"\n".join(_lines_of(rows))  # as export_bytes joins them


def test_a_loaded_file_puts_its_rows_in_seq_order() -> None:
    header = '{"type":"session","id":"s"}'
    rows: list[Any] = [
        (3, b"third", None, None),
        (1, b"first", header, True),
        (2, b"\xffsecond", None, None),  # a damaged line, as bytes
    ]
    assert _file_of(rows) == header.encode() + b"\nfirst\n\xffsecond\nthird\n"
    rows = [(2, b"b", None, None), (1, b"a", header, False)]
    assert _file_of(rows) == header.encode() + b"\na\nb"  # no newline after the last line


def test_a_loaded_file_without_entries_is_its_prefix() -> None:
    assert _file_of([(None, None, "pre\nheader", True)]) == b"pre\nheader\n"
    assert _file_of([(None, None, "header", False)]) == b"header"


_CONFORMANCE = [
    p
    for p in CONFORMANCE_SESSIONS
    if not p.name.startswith("tiny_")
    or p.name in ("tiny_crlf.jsonl", "tiny_header_no_newline.jsonl")
]


def _common_words(data: bytes, count: int) -> list[str]:
    """The ``count`` most frequent words of four letters or more in ``data``."""
    words = re.findall(r"[a-z]{4,}", data.decode("utf-8", "replace").lower())
    return [w for w, _ in collections.Counter(words).most_common(count)]


async def test_tenant_search_gives_each_sessions_own_hits(pg_url: str) -> None:
    """The tenant-wide search reads only part of each session's structure; with one session
    a tenant, its hits are exactly the session's own search's (branches, compactions,
    context edits, branch summaries, a repeated id), on the branch and over all of them."""
    store = await _opened(pg_url)
    try:
        await store.migrate()
        sessions = [(p.name, p.read_bytes()) for p in _CONFORMANCE]
        repeated = [
            message("r1", None, "user", "first words of the release"),
            message("r2", "r1", "assistant", "release noted"),
            message("r1", "r2", "user", "the same id again"),
            message("r3", "r1", "assistant", "release done"),
        ]
        header = {"type": "session", "version": 3, "id": "s-repeated", "cwd": "/w"}
        sessions.append(
            ("repeated", b"".join(json.dumps(e).encode() + b"\n" for e in [header, *repeated]))
        )
        checked = 0
        for n, (name, data) in enumerate(sessions):
            tenant = f"t{n}"
            ref = await store.import_bytes(data, tenant=tenant)
            for query in ["release", *_common_words(data, 6)]:
                for all_branches in (False, True):
                    own = await store.search(ref, query, limit=50, all_branches=all_branches)
                    wide = await store.search_tenant(
                        tenant, query, limit=50, all_branches=all_branches
                    )
                    assert [h.ref for h in wide] == [ref] * len(wide), name
                    assert [h.hit for h in wide] == own, (name, query, all_branches)
                    checked += len(own)
        assert checked > 100
    finally:
        await store.aclose()
