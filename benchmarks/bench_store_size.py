"""Where the PostgreSQL store's bytes go: ``--turns`` turns of ``bench_store_frameworks.py``
(a user message and a reply, one append each) into one session, then each relation's size
(the heap, its TOAST table, each index) per entry, the average stored size of the line and of
the ``tsvector``, the indexes built afresh over the same rows, and the heap with the
``tsvector`` compressed with lz4, without positions, or absent. Then the same turns into a
store whose GIN index is changed in a scratch database only (``fastupdate = off``, a 64 kB
pending list): turns/s, the index's size, a session search's median latency. The schema of
pi-context is not changed by this script: the variants are ``ALTER INDEX`` in the scratch
databases.

    nice .venv/bin/python benchmarks/bench_store_size.py [--turns 200] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from tests.store.pg_server import PgServer, running_server  # noqa: E402

from bench_store_frameworks import PiContext, Texts, _vocabulary  # noqa: E402

_TABLES = "'pi_sessions', 'pi_entries', 'pi_leases', 'pi_store_schema'"
_SIZES = f"""
SELECT c.relname, pg_relation_size(c.oid) FROM pg_class c
 WHERE c.relname IN ('pi_entries', 'pi_entries_pkey', 'pi_entries_id', 'pi_entries_tsv')
UNION ALL
SELECT 'TOAST of pi_entries (with its index)', pg_total_relation_size(c.reltoastrelid)
  FROM pg_class c WHERE c.relname = 'pi_entries'
UNION ALL
SELECT 'all the store''s tables (the frameworks benchmark''s figure)',
       sum(pg_total_relation_size(c.oid)) FROM pg_class c
 WHERE c.relkind = 'r' AND c.relname IN ({_TABLES})
"""
_VARIANTS = [
    ("as created (fastupdate on, 4 MB pending list)", None),
    ("fastupdate = off", "ALTER INDEX pi_entries_tsv SET (fastupdate = off)"),
    (
        "gin_pending_list_limit = 64 kB",
        "ALTER INDEX pi_entries_tsv SET (gin_pending_list_limit = 64)",
    ),
]


async def _rows(conn: Any, sql: str) -> list[Any]:
    cursor = await conn.execute(sql)
    return await cursor.fetchall() if cursor.description else []


async def _filled(server: PgServer, turns: int, ddl: str | None) -> tuple[PiContext, Any, float]:
    import psycopg

    url = server.url(server.new_database())
    pi = PiContext(Texts())
    await pi.open(url, 2)
    conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
    if ddl:
        await conn.execute(ddl)
    await pi.new_session("one")
    began = time.perf_counter()
    for n in range(turns):
        await pi.turn("one", n)
    return pi, conn, turns / (time.perf_counter() - began)


async def _breakdown(server: PgServer, turns: int) -> None:
    pi, conn, _ = await _filled(server, turns, None)
    entries = (await _rows(conn, "SELECT count(*) FROM pi_entries"))[0][0]

    async def sizes(title: str) -> None:
        print(f"\n{title}\n\n| relation | kB | bytes per entry |\n|---|---:|---:|")
        for name, size in await _rows(conn, _SIZES):
            print(f"| {name} | {int(size) / 1e3:,.0f} | {int(size) / entries:,.0f} |")

    await sizes(f"{entries} entries after {turns} turns, as written:")
    await _rows(conn, "CREATE EXTENSION IF NOT EXISTS pgstattuple")
    pending = await _rows(conn, "SELECT pending_pages FROM pgstatginindex('pi_entries_tsv')")
    print(f"\nGIN pending-list pages: {pending[0][0]}")
    averages = await _rows(
        conn,
        "SELECT avg(octet_length(line)), avg(pg_column_size(line)), avg(pg_column_size(tsv)), "
        "avg(length(tsv)), avg(pg_column_size(strip(tsv))) FROM pi_entries",
    )
    line, stored, tsv, lexemes, stripped = (round(float(v)) for v in averages[0])
    print(
        f"per entry: line {line} bytes ({stored} stored), tsvector {tsv} bytes stored "
        f"({lexemes} lexemes; {stripped} bytes without positions)"
    )
    await _rows(conn, "VACUUM pi_entries")
    await sizes("after VACUUM (the pending list merged into the index):")
    await _rows(conn, "CREATE TABLE v AS SELECT * FROM pi_entries")
    print("\n| built afresh over the same rows | kB | bytes per entry |\n|---|---:|---:|")
    for label, columns in [
        (
            "GIN (tenant_id, session_id, tsv): as the schema has it",
            "gin (tenant_id, session_id, tsv)",
        ),
        ("GIN (tsv) alone", "gin (tsv)"),
        ("b-tree (tenant_id, session_id, seq): the primary key", "(tenant_id, session_id, seq)"),
    ]:
        await _rows(
            conn,
            f"CREATE INDEX v_i ON v USING {columns}"
            if "gin" in columns
            else f"CREATE INDEX v_i ON v {columns}",
        )
        size = (await _rows(conn, "SELECT pg_relation_size('v_i')"))[0][0]
        print(f"| {label} | {size / 1e3:,.0f} | {size / entries:,.0f} |")
        await _rows(conn, "DROP INDEX v_i")
    print("\n| heap of the same rows | heap + TOAST kB | bytes per entry |\n|---|---:|---:|")
    for label, change in [
        ("as stored (pglz)", None),
        ("tsvector compressed with lz4", "ALTER TABLE w ALTER COLUMN tsv SET COMPRESSION lz4"),
        ("tsvector without positions", "UPDATE w SET tsv = strip(tsv)"),
        ("no tsvector", "UPDATE w SET tsv = NULL"),
    ]:
        await _rows(conn, "DROP TABLE IF EXISTS w")
        await _rows(conn, "CREATE TABLE w (LIKE pi_entries)")
        if change and change.startswith("ALTER"):
            await _rows(conn, change)
        await _rows(conn, "INSERT INTO w SELECT * FROM pi_entries")
        if change and change.startswith("UPDATE"):
            await _rows(conn, change)
            await _rows(conn, "VACUUM FULL w")
        size = (await _rows(conn, "SELECT pg_total_relation_size('w')"))[0][0]
        print(f"| {label} | {size / 1e3:,.0f} | {size / entries:,.0f} |")
    await conn.close()
    await pi.close()


async def _variants(server: PgServer, turns: int, rounds: int) -> None:
    words = _vocabulary(random.Random(7))
    queries = [" ".join(random.Random(n).sample(words, 2)) for n in range(40)]
    found: dict[str, dict[str, list[float]]] = {
        label: {"rate": [], "gin": [], "total": [], "search": []} for label, _ in _VARIANTS
    }
    for _ in range(rounds):
        for label, ddl in _VARIANTS:
            pi, conn, rate = await _filled(server, turns, ddl)
            gin, total = (
                await _rows(
                    conn,
                    "SELECT pg_relation_size('pi_entries_tsv'), (SELECT sum(pg_total_relation_size"
                    f"(c.oid)) FROM pg_class c WHERE c.relkind = 'r' AND c.relname IN ({_TABLES}))",
                )
            )[0]
            latencies = []
            for query in queries:
                began = time.perf_counter()
                await pi.store.search(pi.refs["one"], query, limit=10)
                latencies.append(time.perf_counter() - began)
            row = found[label]
            row["rate"].append(rate)
            row["gin"].append(int(gin))
            row["total"].append(int(total))
            row["search"].append(statistics.median(latencies))
            await conn.close()
            await pi.close()
    print(
        "\n| GIN index | turns/s (each round) | index kB (bytes per entry) | all tables MB "
        "| search p50 ms (each round) |\n|---|---:|---:|---:|---:|"
    )
    for label, row in found.items():
        gin = statistics.median(row["gin"])
        print(
            f"| {label} | {', '.join(f'{r:.0f}' for r in row['rate'])} "
            f"| {gin / 1e3:,.0f} ({gin / (2 * turns):,.0f}) "
            f"| {statistics.median(row['total']) / 1e6:.2f} "
            f"| {', '.join(f'{s * 1e3:.1f}' for s in row['search'])} |"
        )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with running_server() as server:
        if isinstance(server, str):
            sys.exit(server)
        await _breakdown(server, args.turns)
        await _variants(server, args.turns, args.rounds)


if __name__ == "__main__":
    asyncio.run(main())
