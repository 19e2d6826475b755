"""The PostgreSQL store: one row per entry holding its exact pi line, on psycopg 3 (async).

Tables (created by :meth:`PostgresStore.migrate`):

* ``pi_sessions``: one head row per session, keyed ``(tenant_id, session_id)``: the header line
  (with any lines an imported file had before it), the last ``seq``, the leaf, whether the
  last line ends with a newline, the header's version, when it was created and last written,
  and the minute it was last written (UTC), the one column of the row an append changes that
  is indexed (see :data:`_HEAD_STEPS`).
* ``pi_entries``: one row per line after the header, keyed ``(tenant_id, session_id, seq)``
  (``seq`` counts from 1 without gaps; the key's index also holds the id, parent, type and
  ref: on new tables, and on one an older version made once ``migrate(covering_key=True)``
  rebuilt it, :data:`_KEY_STEPS`): the exact line as ``text``, the
  entry's id, parent, type, role, timestamp and the entry it points at, and a ``tsvector`` of its searchable text
  (at most :data:`~pi_context.store.base.INDEXED_CHARS` characters of it), under a GIN index
  over ``(tenant_id, session_id, tsv)`` (``btree_gin``). No foreign key joins an entry to its
  parent: an imported damaged file keeps lines whose parent is missing, byte for byte.
* ``pi_leases``: one row per leased session, with its holder's token and an expiry.
* ``pi_store_schema``: the schema version.
* ``pi_append``: the append statement as a function.

An append is one statement, a call of the schema's function ``pi_append`` (whose plan the
server keeps; a schema of version 1 has no such function and gets the statement itself): it
moves the head row (the compare-and-swap of ``if_leaf``, the ``seq`` range) and inserts the
entries, or changes nothing; no prepared statement and no session state is kept between
statements, so the store works behind pgbouncer in transaction mode. Errors are one line naming the host and never the password.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import operator
import os
import re
import struct
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

from pi_context import _json
from pi_context.errors import (
    InvalidEntryError,
    LeafMovedError,
    SessionBusyError,
    SessionNotFoundError,
    StoreError,
    StoreSchemaError,
    StoreTimeoutError,
    StoreUnavailableError,
)
from pi_context.session._load.scan import SplitBytes
from pi_context.session.entries import Entry
from pi_context.session.problems import bounded
from pi_context.session.search.query import BRANCH_TYPES
from pi_context.session.search.text import SNIPPET_CHARS
from pi_context.session.store import Session
from pi_context.store.base import (
    ANY_LEAF,
    AppendResult,
    FileLines,
    Lease,
    PreparedEntry,
    SessionPage,
    SessionRef,
    SessionSummary,
    StoredSession,
    TenantHit,
    _AnyLeaf,
    best_hits,
    check_batch,
    check_tenant,
    entry_meta,
    legacy_refusal,
    load_view,
    prepare_entries,
    read_import,
)

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import AsyncConnectionPool

    from pi_context.session.search.query import SearchHit

__all__ = ["SCHEMA_VERSION", "PostgresStore"]

SCHEMA_VERSION: Final = 4
"""1: the tables; 2: with the function :data:`_APPEND_FUNCTION` (an append whose plan the
server keeps); 3: that function's lookups go through the indexes by key, whatever the table's
statistics (before: a plan made while the table looked empty read every entry of the session
on each append), and its plan is made once per connection, not on every call; 4: the head row
an append moves is updated in place (HOT): :data:`_HEAD_STEPS`."""
_LOCK_KEY: Final = 0x70695F7374  # the advisory lock migrate() takes ("pi_st")
_TS_CONFIG: Final = "english"
_ATTEMPTS: Final = 3
"""Tries of an operation whose connection broke (an append is safe to repeat: by entry id)."""

_SCHEMA: Final = [
    "CREATE EXTENSION IF NOT EXISTS btree_gin",
    """CREATE TABLE IF NOT EXISTS pi_store_schema (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        version integer NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS pi_sessions (
        tenant_id text NOT NULL,
        session_id text NOT NULL,
        prefix text NOT NULL,
        head_seq bigint NOT NULL DEFAULT 0,
        leaf_id text,
        tail_newline boolean NOT NULL,
        fixed_tail boolean NOT NULL DEFAULT false,
        version integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, session_id))""",
    """CREATE TABLE IF NOT EXISTS pi_entries (
        tenant_id text NOT NULL,
        session_id text NOT NULL,
        seq bigint NOT NULL,
        entry_id text,
        dup integer NOT NULL DEFAULT 0,
        parent_id text,
        type text,
        role text,
        ts text,
        ref text,
        line text NOT NULL,
        raw bytea,
        tsv tsvector,
        PRIMARY KEY (tenant_id, session_id, seq) INCLUDE (entry_id, parent_id, type, ref),
        FOREIGN KEY (tenant_id, session_id) REFERENCES pi_sessions ON DELETE CASCADE)""",
    """CREATE UNIQUE INDEX IF NOT EXISTS pi_entries_id
        ON pi_entries (tenant_id, session_id, entry_id, dup) WHERE entry_id IS NOT NULL""",
    """CREATE INDEX IF NOT EXISTS pi_entries_tsv
        ON pi_entries USING gin (tenant_id, session_id, tsv)""",
    """CREATE TABLE IF NOT EXISTS pi_leases (
        tenant_id text NOT NULL,
        session_id text NOT NULL,
        token text NOT NULL,
        owner text NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, session_id),
        FOREIGN KEY (tenant_id, session_id) REFERENCES pi_sessions ON DELETE CASCADE)""",
]

_HEAD_STEPS: Final = [
    "ALTER TABLE pi_sessions SET (fillfactor = 50)",
    "ALTER TABLE pi_sessions ADD COLUMN IF NOT EXISTS updated_minute timestamptz",
    "ALTER TABLE pi_sessions ALTER COLUMN updated_minute "
    "SET DEFAULT date_trunc('minute', now(), 'UTC')",
    "DROP INDEX IF EXISTS pi_sessions_updated",
    "CREATE INDEX IF NOT EXISTS pi_sessions_idle ON pi_sessions (updated_minute)",
]
"""Version 4's steps (run by :meth:`PostgresStore.migrate` on a schema before it, and on a new
one after the tables): every append updates its session's head row, and PostgreSQL can write
the new version of a row in place of the old one, on the same page and without a new entry in
any index (a HOT update), only when no indexed column changes and the page has room. Before,
``updated_at`` was indexed (for :meth:`~PostgresStore.prune`), so every append added an entry
to that index and left a dead row and a dead index entry for vacuum. Now the index is on
``updated_minute``, ``updated_at`` cut to the minute (in UTC: the same minute whatever the
connection's time zone; set from the same ``now()``, so never later than ``updated_at``): an
append changes it once a minute at most, and prune finds its candidates by it and checks
``updated_at`` exactly. Half of each page is left free (``fillfactor``) for the new versions of
its rows; pages written before keep their rows until one moves. The column is added without a
value (no rewrite of the table): a session not written since has none, and prune reads those
too."""

_KEY_STEPS: Final = [
    "CREATE UNIQUE INDEX pi_entries_key ON pi_entries (tenant_id, session_id, seq) "
    "INCLUDE (entry_id, parent_id, type, ref)",
    "ALTER TABLE pi_entries DROP CONSTRAINT pi_entries_pkey, "
    "ADD CONSTRAINT pi_entries_pkey PRIMARY KEY USING INDEX pi_entries_key",
]
"""The covering key, on a table made without it (new tables are made with it;
``migrate(covering_key=True)`` rebuilds an older one's, on any schema version: the key's columns,
uniqueness and name stay, so every statement and every version of this code work with either
key): the primary key of ``pi_entries`` also holds each entry's id, parent, type and ref
(``INCLUDE``: stored in the index's leaf pages, not part of the key), so a tenant search reads
a session's structure from the index alone (an index-only scan, for the pages the visibility
map marks all-visible: vacuum marks them, autovacuum after enough inserts) instead of a heap
page per entry. Its cost is on the append path: each entry's key entry is larger (about 9%
more WAL per append of two entries). The index is built anew and then takes the key's place:
the build reads the whole table and blocks its writes (reads go on) until the migration's
transaction ends; the swap, near the migration's end, blocks reads too until it commits."""
_HAS_COVERING_KEY: Final = (
    "SELECT i.indnatts > i.indnkeyatts FROM pg_constraint c "
    "JOIN pg_index i ON i.indexrelid = c.conindid "
    "WHERE c.conrelid = 'pi_entries'::regclass AND c.contype = 'p'"
)

_TENANT_OF_TRANSACTION: Final = "tenant_id = current_setting('pi_context.tenant', true)"
_ROW_SECURITY: Final = [
    statement
    for table in ("pi_sessions", "pi_entries", "pi_leases")
    for statement in (
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
        f"DROP POLICY IF EXISTS pi_tenant ON {table}",
        f"CREATE POLICY pi_tenant ON {table} USING ({_TENANT_OF_TRANSACTION}) "
        f"WITH CHECK ({_TENANT_OF_TRANSACTION})",
    )
]

# Each lookup of an entry by id is a subquery of one id with LIMIT, and the tail's row is named
# by a scalar subquery: the key is then a plain equality in the index condition, never an
# ``= ANY(array)`` or a join clause the planner may leave as a filter over the whole session.
_APPEND_TEMPLATE: Final = f"""
WITH input AS (
    SELECT * FROM unnest(
        %(ids)b::text[], %(parents)b::text[], %(types)b::text[], %(roles)b::text[],
        %(stamps)b::text[], %(refs)b::text[], %(lines)b::text[], %(texts)b::text[]
    ) WITH ORDINALITY AS i(entry_id, parent_id, type, role, ts, ref, line, body, ord)
),
head AS (
    UPDATE pi_sessions h
       SET head_seq = h.head_seq + %(n)s,
           leaf_id = %(leaf)s,
           tail_newline = true,
           fixed_tail = NOT h.tail_newline,
           prefix = CASE WHEN NOT h.tail_newline AND h.head_seq = 0
                         THEN h.prefix || ' ' ELSE h.prefix END,
           updated_at = now(){{touch}}
     WHERE h.tenant_id = %(t)s AND h.session_id = %(s)s AND h.version >= 3
       AND (NOT %(check)s OR h.leaf_id IS NOT DISTINCT FROM %(if_leaf)s::text)
       AND NOT EXISTS (
           SELECT 1 FROM unnest(%(ids)b::text[]) AS p(id)
            WHERE (SELECT true FROM pi_entries e
                    WHERE e.tenant_id = %(t)s AND e.session_id = %(s)s AND e.entry_id = p.id
                    LIMIT 1))
       AND NOT EXISTS (
           SELECT 1 FROM unnest(%(outer)b::text[]) AS p(id)
            WHERE (SELECT true FROM pi_entries e
                    WHERE e.tenant_id = %(t)s AND e.session_id = %(s)s AND e.entry_id = p.id
                    LIMIT 1) IS NULL)
    RETURNING h.head_seq, h.fixed_tail
),
fix AS (
    UPDATE pi_entries e SET line = e.line || ' ', raw = e.raw || ' '::bytea
     WHERE e.tenant_id = %(t)s AND e.session_id = %(s)s
       AND e.seq = (SELECT head.head_seq - %(n)s FROM head WHERE head.fixed_tail)
),
ins AS (
    INSERT INTO pi_entries
        (tenant_id, session_id, seq, entry_id, parent_id, type, role, ts, ref, line, tsv)
    SELECT %(t)s, %(s)s, head.head_seq - %(n)s + i.ord, i.entry_id, i.parent_id, i.type,
           i.role, i.ts, i.ref, i.line, to_tsvector('{_TS_CONFIG}', coalesce(i.body, ''))
      FROM head, input i
)
SELECT head_seq FROM head
"""

_APPEND: Final = _APPEND_TEMPLATE.format(touch="")
"""The append statement sent whole, to a schema before :data:`_APPEND_FUNCTION` (which has no
``updated_minute``)."""

_APPEND_ARGUMENTS: Final = [
    ("t", "text"),
    ("s", "text"),
    ("n", "bigint"),
    ("leaf", "text"),
    ("check", "boolean"),
    ("if_leaf", "text"),
    *[
        (name, "text[]")
        for name in (
            "ids",
            "parents",
            "types",
            "roles",
            "stamps",
            "refs",
            "lines",
            "texts",
            "outer",
        )
    ],
]
_APPEND_FUNCTION: Final = (
    "CREATE OR REPLACE FUNCTION pi_append("
    + ", ".join(f"p_{name} {kind}" for name, kind in _APPEND_ARGUMENTS)
    + ") RETURNS SETOF bigint LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan"
    + " AS $pi_append$ BEGIN RETURN QUERY"
    + re.sub(
        r"%\((\w+)\)[sb]",
        r"p_\1",
        _APPEND_TEMPLATE.format(
            touch=",\n           updated_minute = date_trunc('minute', now(), 'UTC')"
        ),
    )
    + "; END $pi_append$"
)
"""The append statement as a function of the schema: PL/pgSQL keeps its plan in the server
process between calls, where the statement sent whole is parsed and planned each time (the
larger part of the server's work per append). The kept plan is the generic one
(``plan_cache_mode``, for the function's calls only): left to choose, the server found it
dearer than one planned for the call's values and planned again on every call (about 0.2 ms
of the server's CPU per append); its lookups are by key whatever the values. Still one
statement and no prepared statement (the plan belongs to the function, not to the
connection): safe behind pgbouncer."""
_APPEND_CALL: Final = (
    "SELECT * FROM pi_append("
    + ", ".join(
        f"%({name})b" if kind == "text[]" else f"%({name})s::{kind}"
        for name, kind in _APPEND_ARGUMENTS
    )
    + ")"
)
_FIRST_APPEND_FUNCTION: Final = 2
"""The schema version from which :data:`_APPEND_FUNCTION` exists (before: the statement)."""
_FIRST_HOT_HEAD: Final = 4
"""The schema version from which :data:`_HEAD_STEPS` are done (before: ``updated_at`` is
indexed and there is no ``updated_minute``)."""

_IMPORT: Final = f"""
INSERT INTO pi_entries
    (tenant_id, session_id, seq, entry_id, dup, parent_id, type, role, ts, ref, line, raw, tsv)
SELECT %(t)s, %(s)s, i.seq, i.entry_id, i.dup, i.parent_id, i.type, i.role, i.ts, i.ref,
       i.line, i.raw, to_tsvector('{_TS_CONFIG}', i.body)
  FROM unnest(
    %(seqs)b::bigint[], %(ids)b::text[], %(dups)b::integer[], %(parents)b::text[],
    %(types)b::text[], %(roles)b::text[], %(stamps)b::text[], %(refs)b::text[],
    %(lines)b::text[], %(raws)b::bytea[], %(texts)b::text[]
  ) AS i(seq, entry_id, dup, parent_id, type, role, ts, ref, line, raw, body)
"""
_IMPORT_ROWS: Final = 5000
"""Lines an import inserts per statement (one statement per chunk, in one transaction)."""

_LOAD: Final = """
SELECT e.seq, e.line,
       CASE WHEN e.seq IS NULL OR e.seq = 1 THEN h.prefix END,
       CASE WHEN e.seq IS NULL OR e.seq = 1 THEN h.tail_newline END
  FROM pi_sessions h LEFT JOIN LATERAL (
       SELECT seq, coalesce(raw, convert_to(line, 'UTF8')) AS line FROM pi_entries
        WHERE tenant_id = h.tenant_id AND session_id = h.session_id ORDER BY seq) e ON true
 WHERE h.tenant_id = %s AND h.session_id = %s
"""
"""A session's file in one statement (one snapshot): a row per entry line, as bytes (read in
binary: no hex text), in the order of the session's primary-key range, no sort; the head row's
prefix and ``tail_newline`` ride on the first row (``seq`` 1, or the one row of a session
without entries, whose ``seq`` is null). Joining the rows' lines on the client costs less than
the server's ``string_agg(... ORDER BY seq)`` of the whole file, which sorted every line (on
disk past ``work_mem``) and built the file as one value."""

_SEQ: Final = operator.itemgetter(0)
_LINE: Final = operator.itemgetter(1)

_PASSWORD_IN_URL: Final = re.compile(r"(://[^:/@?#]*:)([^@/?#]*)(@)")
_PASSWORD_KEY: Final = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


def _masked(url: str) -> str:
    """``url`` with any password replaced by ``***``."""
    url = _PASSWORD_IN_URL.sub(r"\1***\3", url)
    return _PASSWORD_KEY.sub(r"\1***", url)


class PostgresStore:
    """Sessions in PostgreSQL (``open_store("postgresql://...")``): see the module docstring."""

    def __init__(self, url: str, pool: AsyncConnectionPool[Any], host: str) -> None:
        self.url = _masked(url)
        self._pool = pool
        self._host = host
        self._secrets = _secrets_of(url)
        self._schema_checked = False
        self._append_sql = _APPEND
        """The append: the schema's function, or (a schema before it) the statement."""
        self._version = SCHEMA_VERSION
        """The database's schema version (read with :meth:`_ready`)."""
        self._row_security = False
        """Whether the tables' row-level security applies to this role (read with the schema
        version): then every statement names its tenant (:meth:`_conn`)."""

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        connect_timeout: float = 10.0,
    ) -> PostgresStore:
        """Check that the server answers (one line naming the host and the reason if not),
        then open the pool."""
        try:
            import psycopg
            from psycopg.conninfo import conninfo_to_dict
            from psycopg_pool import AsyncConnectionPool, PoolTimeout
        except ImportError as exc:  # pragma: no cover - the extra is missing
            raise StoreError(
                "the PostgreSQL store needs psycopg: pip install 'pi-context[postgres]'"
            ) from exc
        secrets = _secrets_of(url)
        try:
            params = conninfo_to_dict(url)
        except psycopg.ProgrammingError as exc:
            raise StoreError(
                f"not a PostgreSQL URL ({_masked(url)}): {_reason(exc, secrets)}"
            ) from None
        host = str(params.get("host") or os.environ.get("PGHOST") or "localhost")
        port = params.get("port") or os.environ.get("PGPORT")
        where = f"{host}:{port}" if port else host
        kwargs: dict[str, Any] = {"autocommit": True, "prepare_threshold": None}
        try:
            probe = await psycopg.AsyncConnection.connect(
                url, connect_timeout=max(1, int(connect_timeout)), **kwargs
            )
        except psycopg.Error as exc:
            raise StoreUnavailableError(
                f"cannot connect to PostgreSQL at {where}: {_reason(exc, secrets)}"
            ) from None
        await probe.close()
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            kwargs=kwargs,
            configure=_configure,
            open=False,
            timeout=connect_timeout,
            reconnect_timeout=connect_timeout * 6,
            name="pi_context.store",
        )
        try:
            await pool.open(wait=True, timeout=connect_timeout)
        except (psycopg.Error, PoolTimeout) as exc:
            await pool.close()
            raise StoreUnavailableError(
                f"cannot connect to PostgreSQL at {where}: {_reason(exc, secrets)}"
            ) from None
        return cls(url, pool, where)

    # -- plumbing ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        import psycopg
        from psycopg import errors as pg
        from psycopg_pool import PoolTimeout

        try:
            yield
        except (pg.QueryCanceled, pg.LockNotAvailable) as exc:
            raise StoreTimeoutError(
                f"PostgreSQL at {self._host}: {_reason(exc, self._secrets)}"
            ) from None
        except pg.UndefinedTable:
            raise StoreSchemaError(
                f"PostgreSQL at {self._host} has no pi-context store schema: run "
                "`await store.migrate()` or `pictx store migrate URL` first"
            ) from None
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise StoreUnavailableError(
                f"PostgreSQL at {self._host}: {_reason(exc, self._secrets)}"
            ) from None

    @contextlib.asynccontextmanager
    async def _conn(self, tenant: str | None = None) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A pooled connection (autocommit). Where row-level security applies to this role,
        the statements on ``tenant``'s rows run in a transaction that first sets
        ``pi_context.tenant`` for that transaction only (``set_config(..., true)``: nothing
        outlives it, so a pooler in transaction mode stays safe)."""
        with self._errors():
            async with self._pool.connection() as conn:
                if not self._row_security or tenant is None:
                    yield conn
                    return
                async with conn.transaction():
                    await conn.execute(
                        "SELECT set_config('pi_context.tenant', %s, true)", (tenant,)
                    )
                    yield conn

    def _savepoint(self, conn: psycopg.AsyncConnection[Any]) -> Any:
        """A block whose failed statement leaves the connection usable: a savepoint inside the
        row-level-security transaction, nothing in autocommit."""
        return conn.transaction() if self._row_security else contextlib.nullcontext()

    async def _ready(self) -> None:
        if self._schema_checked:
            return
        async with self._conn() as conn:
            cursor = await conn.execute(
                "SELECT version, row_security_active('pi_entries') FROM pi_store_schema"
            )
            row = await cursor.fetchone()
        _check_version(row[0] if row else None, self._host)
        if row and row[0] >= _FIRST_APPEND_FUNCTION:
            self._append_sql = _APPEND_CALL
        self._version = row[0] if row else SCHEMA_VERSION
        self._row_security = bool(row and row[1])
        self._schema_checked = True

    # -- schema --------------------------------------------------------------------------------------

    async def migrate(
        self, *, row_level_security: bool = False, covering_key: bool = False
    ) -> None:
        """Create or upgrade the schema; idempotent, and safe from many processes at once (an
        advisory transaction lock serializes them). A schema newer than this code is refused.

        ``row_level_security=True`` turns on PostgreSQL's row-level security on every table
        of sessions, entries and leases, with a policy that shows and accepts only the rows of
        the tenant the transaction set in ``pi_context.tenant``: a role that does not own the
        tables (the application's role) then reads and writes one tenant's rows per
        statement, whatever the query says; the store sets the tenant itself. It stays on once
        set (a later ``migrate()`` without it does not turn it off). Stores opened before it
        was turned on must be reopened.

        The entries' primary key includes each entry's id, parent, type and ref (a covering
        key): a tenant search reads each candidate session's structure from the index alone,
        once vacuum has marked the pages all-visible, for about 9% more WAL per append. New
        tables are made with it. A table an earlier version made keeps its plain key (the
        rebuild blocks writes, so it is not done unasked) until ``covering_key=True``
        rebuilds it (:data:`_KEY_STEPS`); the build blocks writes to the entries until the
        migration ends, and the swap at its end blocks reads too. It stays once made; results
        are the same either way."""
        from psycopg import errors as pg

        async with self._conn() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            try:
                async with conn.transaction():
                    cursor = await conn.execute("SELECT version FROM pi_store_schema")
                    row = await cursor.fetchone()
            except pg.UndefinedTable:
                row = None
            if row is not None and row[0] > SCHEMA_VERSION:
                _check_version(row[0], self._host)
            steps = _HEAD_STEPS if row is None or row[0] < _FIRST_HOT_HEAD else []
            for statement in _SCHEMA:
                await conn.execute(statement)
            swap: list[str] = []
            if covering_key:
                covered = await (await conn.execute(_HAS_COVERING_KEY)).fetchone()
                if not (covered and covered[0]):
                    # The key's index is built before anything takes a lock that stops
                    # reads (the head steps lock the sessions, the swap the entries): those
                    # locks last from their statement to the end of the migration.
                    build, *swap = _KEY_STEPS
                    await conn.execute(build)
            for statement in [*steps, *swap, _APPEND_FUNCTION]:
                await conn.execute(statement)
            if row_level_security:
                for statement in _ROW_SECURITY:
                    await conn.execute(statement)
            await conn.execute(
                "INSERT INTO pi_store_schema (version) VALUES (%s) "
                "ON CONFLICT (singleton) DO UPDATE SET version = excluded.version",
                (SCHEMA_VERSION,),
            )
        self._schema_checked = True
        self._append_sql = _APPEND_CALL
        self._version = SCHEMA_VERSION

    # -- sessions ------------------------------------------------------------------------------------

    async def create(
        self, *, tenant: str = "", cwd: str, session_id: str | None = None
    ) -> SessionRef:
        header = Session.in_memory(cwd, session_id=session_id).header
        return await self.import_bytes(_json.dumps(header) + b"\n", tenant=tenant)

    async def import_jsonl(self, path: str | os.PathLike[str], *, tenant: str = "") -> SessionRef:
        import asyncio

        data = await asyncio.to_thread(read_import, path)
        return await self.import_bytes(data, tenant=tenant, where=str(path))

    async def import_bytes(self, data: bytes, *, tenant: str = "", where: str = "") -> SessionRef:
        """Store a session file's bytes as they are (damaged lines included); importing the
        same bytes again returns the same ref, other bytes under a stored id are an error."""
        check_tenant(tenant)
        where = where or "<bytes>"
        cut = FileLines.of(data, where)
        assert cut.scan.header is not None
        ref = SessionRef(tenant, cut.scan.header["id"])
        prefix = _text(cut.prefix, where, 1)
        header_line = cut.scan.header_line or 1
        rows: list[tuple[Any, ...]] = []
        seen: dict[str, int] = {}
        for seq, line in enumerate(cut.lines, 1):
            try:
                text, raw = _text(line, where, header_line + seq), None
            except InvalidEntryError:
                # a damaged line PostgreSQL text cannot hold: kept as bytes, never an entry
                text, raw = "", line
            meta = entry_meta(line) if raw is None else None
            if meta is None:
                rows.append((seq, None, 0, None, None, None, None, None, text, raw, ""))
                continue
            dup = seen.get(meta.id, -1) + 1
            seen[meta.id] = dup
            rows.append(
                (
                    seq,
                    meta.id,
                    dup,
                    meta.parent_id,
                    meta.type,
                    meta.role,
                    meta.timestamp,
                    meta.ref,
                    text,
                    None,
                    _indexable(meta.text),
                )
            )
        leaf = cut.scan.entries[-1].id if len(cut.scan.entries) else None
        await self._ready()
        async with self._conn(tenant) as conn, conn.transaction():
            cursor = await conn.execute(
                "INSERT INTO pi_sessions (tenant_id, session_id, prefix, head_seq, leaf_id, "
                "tail_newline, version) VALUES (%s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT DO NOTHING RETURNING 1",
                (tenant, ref.id, prefix, len(rows), leaf, cut.tail_newline, cut.scan.version),
            )
            created = await cursor.fetchone() is not None
            if created:
                for start in range(0, len(rows), _IMPORT_ROWS):
                    await conn.execute(
                        _IMPORT, _columns(tenant, ref.id, rows[start : start + _IMPORT_ROWS])
                    )
        if not created and await self.export_bytes(ref) != data:
            raise StoreError(f"session {ref} is already stored with other content")
        return ref

    async def export_bytes(self, ref: SessionRef) -> bytes:
        return b"\n".join(await self._file_lines(ref))

    async def _file_lines(self, ref: SessionRef) -> list[bytes]:
        """The session's file as its lines (:func:`_lines_of`), in one statement."""
        await self._ready()
        async with self._conn(ref.tenant) as conn:
            cursor = await conn.execute(_LOAD, (ref.tenant, ref.id), binary=True)
            rows = await cursor.fetchall()
        if not rows:
            raise _not_found(ref)
        return _lines_of(rows)

    async def export_jsonl(self, ref: SessionRef, out_path: str | os.PathLike[str]) -> None:
        import asyncio

        data = await self.export_bytes(ref)
        await asyncio.to_thread(Path(out_path).write_bytes, data)

    async def load(self, ref: SessionRef) -> StoredSession:
        # The rows' lines go to the reader as they are: no file joined to be split again.
        return await load_view(ref, SplitBytes(await self._file_lines(ref)))

    # -- appending ---------------------------------------------------------------------------------

    async def append(
        self,
        ref: SessionRef,
        entries: Sequence[Mapping[str, Any] | Entry],
        *,
        if_leaf: str | _AnyLeaf | None = ANY_LEAF,
    ) -> AppendResult:
        """Append ``entries`` in one statement; see :mod:`pi_context.store` for the rules."""
        batch = prepare_entries(entries)
        lines = [_text(entry.line, f"entry {entry.id!r}", None) for entry in batch]
        await self._ready()
        in_batch = {e.id for e in batch}
        outer = sorted({e.parent_id for e in batch if e.parent_id and e.parent_id not in in_batch})
        params = {
            "t": ref.tenant,
            "s": ref.id,
            "n": len(batch),
            "leaf": batch[-1].id,
            "check": not isinstance(if_leaf, _AnyLeaf),
            "if_leaf": None if isinstance(if_leaf, _AnyLeaf) else if_leaf,
            "ids": _TextArray([e.id for e in batch]),
            "parents": _TextArray([e.parent_id for e in batch]),
            "types": _TextArray([e.type for e in batch]),
            "roles": _TextArray([e.role for e in batch]),
            "stamps": _TextArray([e.timestamp for e in batch]),
            "refs": _TextArray([e.ref for e in batch]),
            "lines": _TextArray(lines),
            "texts": _TextArray([_indexable(e.text) for e in batch]),
            "outer": _TextArray(outer),
        }
        last: StoreUnavailableError | None = None
        for _ in range(_ATTEMPTS):
            try:
                done = await self._append_once(ref, batch, params, if_leaf)
            except StoreUnavailableError as exc:
                last = exc  # the statement may or may not have committed: ask again by id
                continue
            if done is not None:
                return done
        if last is not None:
            raise last
        raise StoreError(f"{ref}: the append kept conflicting with other writers; try again")

    async def _append_once(
        self,
        ref: SessionRef,
        batch: Sequence[PreparedEntry],
        params: dict[str, Any],
        if_leaf: str | _AnyLeaf | None,
    ) -> AppendResult | None:
        from psycopg import errors as pg

        async with self._conn(ref.tenant) as conn:
            try:
                async with self._savepoint(conn):
                    cursor = await conn.execute(self._append_sql, params)
                    row = await cursor.fetchone()
            except pg.UniqueViolation:
                row = None  # a writer stored one of these ids meanwhile: see below
            if row is not None:
                end = int(row[0])
                n = len(batch)
                return AppendResult(batch[-1].id, tuple(range(end - n + 1, end + 1)))
            return await self._diagnose(conn, ref, batch, params, if_leaf)

    async def _diagnose(
        self,
        conn: psycopg.AsyncConnection[Any],
        ref: SessionRef,
        batch: Sequence[PreparedEntry],
        params: dict[str, Any],
        if_leaf: str | _AnyLeaf | None,
    ) -> AppendResult | None:
        """Why the append statement changed nothing: the stored result of a retry, or the
        error; ``None`` when nothing is wrong any more (a race: try again)."""
        cursor = await conn.execute(
            "SELECT version, leaf_id FROM pi_sessions WHERE tenant_id = %s AND session_id = %s",
            (ref.tenant, ref.id),
        )
        head = await cursor.fetchone()
        if head is None:
            raise _not_found(ref)
        if head[0] < 3:
            raise legacy_refusal(ref, head[0])
        cursor = await conn.execute(
            "SELECT entry_id, line, seq FROM pi_entries WHERE tenant_id = %s AND session_id = %s"
            " AND entry_id = ANY(%s::text[]) ORDER BY seq",
            (ref.tenant, ref.id, [*params["ids"], *params["outer"]]),
        )
        stored: dict[str, tuple[bytes, int]] = {
            r[0]: (r[1].encode("utf-8"), int(r[2])) for r in await cursor.fetchall()
        }
        ids = set(params["ids"])
        lines = {k: v[0] for k, v in stored.items() if k in ids}
        retry = check_batch(batch, lines, _Known(stored, ids))
        if retry is not None:
            return AppendResult(batch[-1].id, tuple(stored[e.id][1] for e in batch))
        if not isinstance(if_leaf, _AnyLeaf) and head[1] != if_leaf:
            raise LeafMovedError(
                f"{ref}: the leaf is {bounded(repr(head[1]), 80)}, not "
                f"{bounded(repr(if_leaf), 80)}; nothing was appended"
            )
        return None

    # -- search ------------------------------------------------------------------------------------

    async def search(
        self,
        ref: SessionRef,
        query: str,
        *,
        limit: int = 10,
        all_branches: bool = False,
        snippet_chars: int = SNIPPET_CHARS,
    ) -> list[SearchHit]:
        """Hits as :meth:`Session.search` gives them: the full-text index finds and ranks the
        entries (``ts_rank_cd``), the session package decides the branch and what replaced
        each hit, from the entries' ids, parents and types (no bodies are read for that)."""
        from pi_context.session.search.index import IndexedEntries
        from pi_context.session.search.query import query_phrases

        await self._ready()
        phrases = query_phrases(query)
        if limit <= 0 or not phrases:
            await self._require(ref)
            return []
        tsquery = " || ".join([f"phraseto_tsquery('{_TS_CONFIG}', %s)"] * len(phrases))
        wanted = max(100, limit * 20)
        # Two statements, no transaction: an entry appended between them is not in the
        # structure read first, and its hit is skipped (as if the search ran before it).
        async with self._conn(ref.tenant) as conn:
            cursor = await conn.execute(
                "SELECT entry_id, parent_id, type, role, ts, ref FROM pi_entries "
                "WHERE tenant_id = %s AND session_id = %s AND entry_id IS NOT NULL ORDER BY seq",
                (ref.tenant, ref.id),
            )
            structure = IndexedEntries()
            for columns in await cursor.fetchall():
                structure.add(columns)
            if not len(structure):
                await self._require(ref, conn)
                return []
            cursor = await conn.execute(
                f"SELECT e.seq, e.entry_id, ts_rank_cd(e.tsv, q.q, 1) AS score, e.line "
                f"FROM pi_entries e, (SELECT ({tsquery}) AS q) q "
                f"WHERE e.tenant_id = %s AND e.session_id = %s AND e.tsv @@ q.q "
                f"AND e.entry_id IS NOT NULL ORDER BY score DESC, e.seq LIMIT %s",
                (*[" ".join(p) for p in phrases], ref.tenant, ref.id, wanted),
            )
            ranked = await cursor.fetchall()
        return _session_hits(
            structure,
            [(entry_id, score, line) for _seq, entry_id, score, line in ranked],
            query,
            limit=limit,
            all_branches=all_branches,
            snippet_chars=snippet_chars,
        )

    async def search_tenant(
        self,
        tenant: str,
        query: str,
        *,
        limit: int = 10,
        all_branches: bool = False,
        snippet_chars: int = SNIPPET_CHARS,
    ) -> list[TenantHit]:
        """The best hits over every session of ``tenant``: one statement ranks the tenant's
        entries by the full-text index (``ts_rank_cd``; the index's leading column is the
        tenant) and reads the sessions of the best candidates (each entry's id and parent,
        the type and ref of compactions, context edits and branch summaries, the candidates'
        lines), from which the session package decides, as :meth:`search` does, each hit's
        branch and what replaced it."""
        from pi_context.session.search.query import query_phrases

        check_tenant(tenant)
        await self._ready()
        phrases = query_phrases(query)
        if limit <= 0 or not phrases:
            return []
        wanted = max(100, limit * 20)
        hits: list[TenantHit] = []
        async with self._conn(tenant) as conn:
            cursor = await conn.execute(
                _tenant_search(len(phrases)),
                {
                    **{f"q{i}": " ".join(p) for i, p in enumerate(phrases)},
                    "t": tenant,
                    "wanted": wanted,
                    "batch": limit,
                },
                binary=True,
            )
            by_session: dict[str, list[tuple[int, str, float]]] = {}
            fetched: dict[str, Sequence[Any]] = {}
            for part, _n, sid, seq, entry_id, score, *columns in await cursor.fetchall():
                if part == 0:
                    by_session.setdefault(sid, []).append((int(seq), entry_id, float(score)))
                else:
                    fetched[sid] = columns
            order = list(by_session)  # sessions by their best candidate
            # Read the sessions of the best `limit` candidates first (with the ranking, in one
            # statement); more only while the hits found fall short (candidates off the
            # branch, or shadowed).
            done = 0
            while done < len(order) and len(hits) < limit:
                batch = order[done : done + limit]
                done += len(batch)
                missing = [sid for sid in batch if sid not in fetched]
                if missing:
                    keys = [(sid, seq) for sid in missing for seq, _, _ in by_session[sid]]
                    cursor = await conn.execute(
                        _TENANT_BATCH,
                        {  # text arrays by the binary dumper (a list is inspected item by item)
                            "sids": _TextArray(missing),
                            "t": tenant,
                            "key_sids": _TextArray([k[0] for k in keys]),
                            "key_seqs": _TextArray([str(k[1]) for k in keys]),
                        },
                        binary=True,
                    )
                    fetched.update({row[0]: row[1:] for row in await cursor.fetchall()})
                for sid in batch:
                    columns = fetched.get(sid)
                    found = _lean_structure(columns) if columns is not None else None
                    if found is None:  # a repeated id: the hit may be a row not fetched
                        structure, lines = await _full_structure(conn, tenant, sid, by_session)
                    else:
                        structure, lines = found
                    ranked = [
                        (entry_id, score, lines.get(seq, ""))
                        for seq, entry_id, score in by_session[sid]
                    ]
                    session_hits = _session_hits(
                        structure,
                        ranked,
                        query,
                        limit=limit,
                        all_branches=all_branches,
                        snippet_chars=snippet_chars,
                    )
                    hits += [TenantHit(SessionRef(tenant, sid), hit) for hit in session_hits]
        return best_hits(hits, limit)

    async def _require(
        self, ref: SessionRef, conn: psycopg.AsyncConnection[Any] | None = None
    ) -> None:
        sql = "SELECT 1 FROM pi_sessions WHERE tenant_id = %s AND session_id = %s"
        if conn is None:
            async with self._conn(ref.tenant) as own:
                cursor = await own.execute(sql, (ref.tenant, ref.id))
                found = await cursor.fetchone()
        else:
            cursor = await conn.execute(sql, (ref.tenant, ref.id))
            found = await cursor.fetchone()
        if found is None:
            raise _not_found(ref)

    # -- leases --------------------------------------------------------------------------------------

    def lease(self, ref: SessionRef, *, owner: str, ttl: float = 30.0) -> Lease:
        return Lease(self, ref, owner, ttl)

    async def _acquire(self, lease: Lease) -> None:
        await self._ready()
        ref = lease.ref
        async with self._conn(ref.tenant) as conn:
            cursor = await conn.execute(
                "INSERT INTO pi_leases (tenant_id, session_id, token, owner, expires_at) "
                "SELECT s.tenant_id, s.session_id, %s, %s, now() + make_interval(secs => %s) "
                "FROM pi_sessions s WHERE s.tenant_id = %s AND s.session_id = %s "
                "ON CONFLICT (tenant_id, session_id) DO UPDATE SET token = excluded.token, "
                "owner = excluded.owner, expires_at = excluded.expires_at "
                "WHERE pi_leases.expires_at < now() OR pi_leases.token = excluded.token "
                "RETURNING 1",
                (lease.token, lease.owner, float(lease.ttl), ref.tenant, ref.id),
            )
            if await cursor.fetchone() is None:
                await self._require(ref, conn)
                raise SessionBusyError(f"session {ref} is leased by another holder")

    async def _release(self, lease: Lease) -> None:
        async with self._conn(lease.ref.tenant) as conn:
            await conn.execute(
                "DELETE FROM pi_leases WHERE tenant_id = %s AND session_id = %s AND token = %s",
                (lease.ref.tenant, lease.ref.id, lease.token),
            )

    # -- listing and removal -------------------------------------------------------------------

    async def list_sessions(
        self, *, tenant: str = "", limit: int = 50, cursor: str | None = None
    ) -> SessionPage:
        """A page of the tenant's sessions by id (keyset: ``cursor`` is the last id seen);
        only head rows are read."""
        check_tenant(tenant)
        await self._ready()
        limit = max(0, limit)
        async with self._conn(tenant) as conn:
            rows = await (
                await conn.execute(
                    "SELECT session_id, head_seq, leaf_id, extract(epoch FROM updated_at) "
                    "FROM pi_sessions WHERE tenant_id = %s AND session_id > %s "
                    "ORDER BY session_id LIMIT %s",
                    (tenant, cursor or "", limit + 1),
                )
            ).fetchall()
        page = rows[:limit]
        sessions = [
            SessionSummary(SessionRef(tenant, r[0]), int(r[1]), r[2], float(r[3])) for r in page
        ]
        more = len(rows) > limit
        return SessionPage(sessions, page[-1][0] if more and page else None)

    async def delete(self, ref: SessionRef) -> None:
        await self._ready()
        async with self._conn(ref.tenant) as conn:
            cursor = await conn.execute(
                "DELETE FROM pi_sessions WHERE tenant_id = %s AND session_id = %s RETURNING 1",
                (ref.tenant, ref.id),
            )
            if await cursor.fetchone() is None:
                raise _not_found(ref)

    async def prune(self, *, idle_seconds: float, tenant: str | None = None) -> int:
        """Delete every session (whole: head, entries, lease) not written for
        ``idle_seconds``; returns how many. The candidates are found by the index on
        ``updated_minute`` (never later than ``updated_at``; none on a session not written
        since the schema's version 4), and each is checked by ``updated_at``."""
        await self._ready()
        if self._row_security and tenant is None:
            raise StoreError(
                "row-level security is on for this role: prune one tenant at a time "
                "(tenant=...), or as the role that owns the tables"
            )
        async with self._conn(tenant) as conn:
            idle = "updated_at < now() - make_interval(secs => %(idle)s)"
            if self._version >= _FIRST_HOT_HEAD:
                idle = (
                    "(updated_minute < now() - make_interval(secs => %(idle)s) "
                    f"OR updated_minute IS NULL) AND {idle}"
                )
            cursor = await conn.execute(
                f"DELETE FROM pi_sessions WHERE {idle} "
                "AND (%(t)s::text IS NULL OR tenant_id = %(t)s::text)",
                {"idle": float(idle_seconds), "t": tenant},
            )
            return cursor.rowcount

    async def aclose(self) -> None:
        await self._pool.close()


class _TextArray(list[str | None]):
    """A one-dimensional ``text[]`` parameter, sent in PostgreSQL's binary array format by
    :func:`_text_array_dumper` (the generic list adaptation inspects every element to choose
    a type: the bulk of an append's client time)."""


_ARRAY_HEAD: Final = struct.Struct("!iiIii")  # dimensions, has nulls, element type, size, base
_EMPTY_ARRAY: Final = struct.pack("!iiI", 0, 0, 25)
_LENGTH: Final = struct.Struct("!i")
_NULL: Final = _LENGTH.pack(-1)


@functools.cache
def _text_array_dumper() -> type:
    """The psycopg dumper of :class:`_TextArray` (built on first use: psycopg is imported
    only by a PostgreSQL store)."""
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    class TextArrayDumper(Dumper):
        format = Format.BINARY
        oid = 1009  # text[]

        def dump(self, obj: Any) -> bytes:
            if not obj:
                return _EMPTY_ARRAY
            parts = [_ARRAY_HEAD.pack(1, None in obj, 25, len(obj), 1)]
            pack = _LENGTH.pack
            for item in obj:
                if item is None:
                    parts.append(_NULL)
                else:
                    data = item.encode("utf-8")
                    parts.append(pack(len(data)))
                    parts.append(data)
            return b"".join(parts)

    return TextArrayDumper


async def _configure(conn: psycopg.AsyncConnection[Any]) -> None:
    """Set up a new pooled connection: the binary dumper of :class:`_TextArray`."""
    conn.adapters.register_dumper(_TextArray, _text_array_dumper())


class _Known:
    """Stored ids for :func:`check_batch`: ids of the batch found stored, and parents."""

    def __init__(self, stored: Mapping[str, Any], ids: set[str]) -> None:
        self._stored = stored

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._stored


class _FetchedIndex:
    """What the session package's search reads of an index, from rows already fetched."""

    def __init__(
        self,
        structure: Any,
        ranked: list[tuple[int, float]],
        data: dict[int, Mapping[str, Any] | None],
    ) -> None:
        self.structure = structure
        self.memo: dict[str, object] = {}
        self._ranked = ranked
        self._data = data

    def rank(self, match: str) -> Iterator[tuple[int, float]]:
        return iter(self._ranked)

    def entry_data(self, row: int) -> Mapping[str, Any] | None:
        return self._data.get(row)

    def rebuild(self) -> None:
        return None


def _in_seq_order(seqs: list[int], columns: list[list[Any]]) -> tuple[list[int], list[list[Any]]]:
    """``seqs`` and ``columns`` (a value per seq each) in ``seq`` order: as they are when the
    subquery's order was kept (checked by sorting: a C pass), else rearranged."""
    if seqs == sorted(seqs):
        return seqs, columns
    order = sorted(range(len(seqs)), key=seqs.__getitem__)
    return [seqs[i] for i in order], [[c[i] for i in order] for c in columns]


def _structure(columns: Sequence[list[Any] | None]) -> Any:
    """One session's :class:`IndexedEntries` from its columns as arrays (``seq``, id, parent,
    type, role, timestamp, ref; ``None`` when it has no entry), in ``seq`` order."""
    from pi_context.session.search.index import IndexedEntries

    seqs = columns[0]
    if not seqs:
        return IndexedEntries()
    _, (ids, parents, types, roles, stamps, refs) = _in_seq_order(
        seqs, [c or [] for c in columns[1:]]
    )
    return IndexedEntries(
        ids=ids,
        parents=parents,
        types=types,
        roles=roles,
        timestamps=stamps,
        refs=refs,
        by_id=dict(zip(ids, range(len(ids)), strict=True)),  # the later row of a repeated id
    )


_KEPT: Final = ", ".join(f"'{t}'" for t in BRANCH_TYPES)

# The columns of one session of a tenant search's batch (``s.sid``): the ids and parents of
# every entry (arrays in seq order, read by the session's primary-key range: from the index
# alone when it is the covering key, on pages vacuum marked all-visible), the seq, type
# and ref of the entries the branch rules look at, and the seq, role, timestamp and line of
# the session's candidates (``k``: session id and seq).
_SESSION_COLUMNS: Final = f"""
CROSS JOIN LATERAL (
    SELECT array_agg(seq) AS seqs, array_agg(entry_id) AS ids, array_agg(parent_id) AS parents,
           array_agg(seq) FILTER (WHERE kept) AS kept_seqs,
           array_agg(type) FILTER (WHERE kept) AS kept_types,
           array_agg(ref) FILTER (WHERE kept) AS kept_refs
      FROM (SELECT seq, entry_id, parent_id, type, ref, type IN ({_KEPT}) AS kept
              FROM pi_entries
             WHERE tenant_id = %(t)s AND session_id = s.sid AND entry_id IS NOT NULL
             ORDER BY seq) o) e
CROSS JOIN LATERAL (
    SELECT array_agg(p.seq) AS cand_seqs, array_agg(p.role) AS cand_roles,
           array_agg(p.ts) AS cand_stamps, array_agg(p.line) AS cand_lines
      FROM {{keys}} AS k(sid, seq)
      JOIN pi_entries p ON p.tenant_id = %(t)s AND p.session_id = k.sid AND p.seq = k.seq
     WHERE k.sid = s.sid) c
"""

# One row per session of a later batch of a tenant search, the candidates' keys given.
_TENANT_BATCH: Final = "SELECT s.sid, e.*, c.* FROM unnest(%(sids)s::text[]) AS s(sid)" + (
    _SESSION_COLUMNS.format(keys="unnest(%(key_sids)s::text[], %(key_seqs)s::text[]::bigint[])")
)


@functools.cache
def _tenant_search(phrases: int) -> str:
    """A tenant search's first statement, for a query of ``phrases`` parts: the tenant's best
    ``%(wanted)s`` entries by the full-text index (rows of part 0, best first: session, seq,
    id, score as text: the float4's shortest digits, as the session search reads it), then the
    first batch, the sessions of the best ``%(batch)s`` of them (rows of part 1, as
    :data:`_TENANT_BATCH` gives them)."""
    tsquery = " || ".join(f"phraseto_tsquery('{_TS_CONFIG}', %(q{i})s)" for i in range(phrases))
    return f"""
WITH ranked AS MATERIALIZED (
    SELECT e.session_id, e.seq, e.entry_id, ts_rank_cd(e.tsv, q.q, 1) AS score
      FROM pi_entries e, (SELECT ({tsquery}) AS q) q
     WHERE e.tenant_id = %(t)s AND e.tsv @@ q.q AND e.entry_id IS NOT NULL
     ORDER BY score DESC, e.session_id, e.seq LIMIT %(wanted)s),
r AS MATERIALIZED (
    SELECT ranked.*, row_number() OVER (ORDER BY score DESC, session_id, seq) AS n
      FROM ranked),
b AS (SELECT session_id AS sid, min(n) AS n FROM r GROUP BY session_id ORDER BY 2
      LIMIT %(batch)s)
SELECT 0 AS part, r.n, r.session_id, r.seq, r.entry_id, r.score::text,
       NULL::bigint[], NULL::text[], NULL::text[], NULL::bigint[], NULL::text[], NULL::text[],
       NULL::bigint[], NULL::text[], NULL::text[], NULL::text[]
  FROM r
UNION ALL
SELECT 1, s.n, s.sid, NULL, NULL, NULL, e.*, c.* FROM b AS s
{_SESSION_COLUMNS.format(keys="(SELECT session_id, seq FROM r)")}
ORDER BY 1, 2
"""


def _lean_structure(columns: Sequence[list[Any] | None]) -> tuple[Any, dict[int, str]] | None:
    """A session's :class:`IndexedEntries` holding what a search of the given candidates
    reads (ids and parents of all; type and ref of the entries the branch rules look at;
    role and timestamp of the candidates), and the candidates' lines by seq, from a row of
    :data:`_TENANT_BATCH`; ``None`` when the session repeats an id (a candidate may then
    stand for a later row, whose role and timestamp were not read)."""
    from pi_context.session.search.index import IndexedEntries

    seqs, ids, parents, kept_seqs, kept_types, kept_refs = columns[:6]
    cand_seqs, cand_roles, cand_stamps, cand_lines = columns[6:10]
    if not seqs or not ids:
        return IndexedEntries(), {}
    seqs, (ids, parents) = _in_seq_order(seqs, [ids, parents or []])
    by_id = dict(zip(ids, range(len(ids)), strict=True))
    if len(by_id) != len(ids):
        return None
    count = len(ids)

    def row_of(seq: int) -> int | None:  # seqs are sorted and distinct
        row = bisect.bisect_left(seqs, seq)
        return row if row < count and seqs[row] == seq else None

    types: list[str] = [""] * count
    refs: list[str | None] = [None] * count
    for seq, kind, ref in zip(kept_seqs or [], kept_types or [], kept_refs or [], strict=True):
        row = row_of(seq)
        if row is not None:
            types[row] = kind
            refs[row] = ref
    roles: list[str | None] = [None] * count
    stamps: list[str | None] = [None] * count
    lines: dict[int, str] = {}
    for seq, role, stamp, line in zip(
        cand_seqs or [], cand_roles or [], cand_stamps or [], cand_lines or [], strict=True
    ):
        row = row_of(seq)
        if row is not None:
            roles[row] = role
            stamps[row] = stamp
            lines[seq] = line
    structure = IndexedEntries(
        ids=ids,
        parents=parents,
        types=types,
        roles=roles,
        timestamps=stamps,
        refs=refs,
        by_id=by_id,
    )
    return structure, lines


async def _full_structure(
    conn: psycopg.AsyncConnection[Any],
    tenant: str,
    sid: str,
    by_session: Mapping[str, Sequence[tuple[int, str, float]]],
) -> tuple[Any, dict[int, str]]:
    """A session's whole :class:`IndexedEntries` and its candidates' lines by seq (for a
    session that repeats an id)."""
    cursor = await conn.execute(
        "SELECT array_agg(seq), array_agg(entry_id), array_agg(parent_id), array_agg(type), "
        "array_agg(role), array_agg(ts), array_agg(ref) "
        "FROM (SELECT seq, entry_id, parent_id, type, role, ts, ref FROM pi_entries "
        "WHERE tenant_id = %s AND session_id = %s AND entry_id IS NOT NULL ORDER BY seq) o",
        (tenant, sid),
        binary=True,
    )
    row = await cursor.fetchone()
    structure = _structure(row if row is not None else [None])
    cursor = await conn.execute(
        "SELECT seq, line FROM pi_entries "
        "WHERE tenant_id = %s AND session_id = %s AND seq = ANY(%s::text[]::bigint[])",
        (tenant, sid, _TextArray([str(seq) for seq, _, _ in by_session[sid]])),
    )
    return structure, {int(seq): line for seq, line in await cursor.fetchall()}


def _session_hits(
    structure: Any,
    ranked: Sequence[tuple[str, float, str]],
    query: str,
    *,
    limit: int,
    all_branches: bool,
    snippet_chars: int,
) -> list[SearchHit]:
    """One session's hits, as :meth:`Session.search` makes them, from its structure (ids,
    parents, types) and the index's ranked candidates ``(entry id, score, line)``."""
    from pi_context.session.search.index import SearchIndex
    from pi_context.session.search.query import search

    rows: list[tuple[int, float]] = []
    data: dict[int, Mapping[str, Any] | None] = {}
    for entry_id, score, line in ranked:
        row = structure.by_id.get(entry_id)  # None: appended after the structure was read
        if row is None or row in data:
            continue
        try:
            decoded = _json.loads(line)
        except ValueError:
            decoded = None
        data[row] = decoded if isinstance(decoded, dict) else None
        rows.append((row, float(score)))
    index = _FetchedIndex(structure, rows, data)
    return search(
        cast(SearchIndex, index),
        query,
        limit=limit,
        all_branches=all_branches,
        snippet_chars=snippet_chars,
    )


def _check_version(version: int | None, host: str) -> None:
    if version is None:
        raise StoreSchemaError(
            f"PostgreSQL at {host} has no pi-context store schema: run "
            "`await store.migrate()` or `pictx store migrate URL` first"
        )
    if version > SCHEMA_VERSION:
        raise StoreSchemaError(
            f"PostgreSQL at {host} has store schema version {version}, newer than this "
            f"pi-context's {SCHEMA_VERSION}: upgrade pi-context"
        )


def _not_found(ref: SessionRef) -> SessionNotFoundError:
    return SessionNotFoundError(f"no session {ref.id!r} in tenant {ref.tenant!r}")


def _lines_of(rows: list[Any]) -> list[bytes]:
    """A session's file as its lines, split on ``\\n``, from the rows of :data:`_LOAD`
    (``seq``, line, and the prefix and ``tail_newline`` on the first row): the prefix's lines,
    the entries' lines in ``seq`` order (a stored line holds no newline), and ``b""`` after the
    last newline when the file ends with one (joined with newlines: the file's bytes, as
    :meth:`PostgresStore.export_bytes` gives them)."""
    # Sorted here, whatever order the rows came in: the server sends the lateral subquery's
    # order, which SQL does not promise for the join's output (sorting sorted rows is one
    # comparison per row).
    rows.sort(key=_SEQ)
    _, _, prefix, tail_newline = rows[0]
    lines: list[bytes] = prefix.encode("utf-8").split(b"\n")
    if rows[0][0] is not None:
        lines += map(_LINE, rows)
    if tail_newline:
        lines.append(b"")
    return lines


def _text(line: bytes, where: str, number: int | None) -> str:
    """A line as PostgreSQL ``text`` holds it: UTF-8 without NUL, else an error naming it."""
    place = f"{where}:{number}" if number is not None else where
    if b"\x00" in line:
        raise InvalidEntryError(f"{place}: the line holds a NUL byte, which PostgreSQL text cannot")
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidEntryError(f"{place}: the line is not UTF-8 ({exc.reason})") from None


def _columns(tenant: str, session_id: str, rows: Sequence[tuple[Any, ...]]) -> dict[str, Any]:
    """The import statement's parameters: one array per column of ``rows``."""
    names = [
        "seqs",
        "ids",
        "dups",
        "parents",
        "types",
        "roles",
        "stamps",
        "refs",
        "lines",
        "raws",
        "texts",
    ]
    columns: dict[str, Any] = {
        name: list(column) for name, column in zip(names, zip(*rows, strict=True), strict=True)
    }
    return {"t": tenant, "s": session_id, **columns}


def _indexable(text: str | None) -> str:
    """The text a tsvector is made of: no NUL, no lone surrogate."""
    if not text:
        return ""
    return text.replace("\x00", " ").encode("utf-8", "replace").decode("utf-8")


def _secrets_of(url: str) -> list[str]:
    found = [m.group(2) for m in _PASSWORD_IN_URL.finditer(url) if m.group(2)]
    found += [m.group(2).strip("'") for m in _PASSWORD_KEY.finditer(url)]
    from urllib.parse import unquote

    found += [unquote(s) for s in found]
    env = os.environ.get("PGPASSWORD")
    if env:
        found.append(env)
    return [s for s in found if s]


def _scrub(text: str, secrets: Sequence[str]) -> str:
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def _reason(exc: BaseException, secrets: Sequence[str]) -> str:
    """The last line of a driver error that says what went wrong, without any password."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    text = " ".join(lines) if lines else type(exc).__name__
    return bounded(_scrub(text, secrets), 300)
