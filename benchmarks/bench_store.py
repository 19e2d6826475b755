"""Appends per second and latency of the session stores, with 1, 8 and 32 sessions written at
once from one Python process (asyncio), each append two entries (a user and an assistant
message) under ``if_leaf``. The PostgreSQL store runs against a temporary local server (the
tests' own, Unix socket); the file store on the same machine is the same-run baseline.

    .venv/bin/python benchmarks/bench_store.py [--seconds 5] [--sessions 1,8,32] [--connections 32]
        [--postgres-only | --file-only] [--stored N]

Each row also gives the client's CPU per append (``time.process_time``) and, for PostgreSQL,
the server's (its postmaster's and ended backends' CPU, read from ``/proc``: Linux only), and,
for PostgreSQL, the share of the head rows' updates that were HOT (``pg_stat_user_tables``
of ``pi_sessions``: ``n_tup_hot_upd / n_tup_upd``; an update that is not HOT writes a new entry
in every index of the table), the size of ``pi_sessions`` with its indexes after the run and
the WAL the server wrote per append (``pg_stat_wal.wal_bytes``, the whole cluster).
``--connections`` caps the pool; ``--postgres-only`` leaves out the file store, ``--file-only``
the PostgreSQL store (no server is started); ``--stored N`` gives each session N entries before
the timed appends (a long session).

``--profile N`` measures instead what one append costs: N sequential appends to one session,
the server's committed transactions per append (``pg_stat_database.xact_commit``; one
autocommit statement is one transaction and one round trip) and the client's CPU per append
(``time.process_time``: psycopg, the JSON and the checks; waiting is not counted).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.store.pg_server import running_server  # noqa: E402

from pi_context.store import SessionStore, open_store  # noqa: E402


def _message(entry_id: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2025-01-01T00:00:00.000Z",
        "message": {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1},
    }


async def _run(
    store: SessionStore, sessions: int, seconds: float, stored: int = 0
) -> tuple[int, list[float], float]:
    await store.migrate()
    refs = [await store.create(cwd="/w", session_id=f"b{sessions}-{i}") for i in range(sessions)]
    leaves: list[str | None] = [None] * sessions
    if stored:  # each session already holds `stored` entries (one append: not timed)
        for index, ref in enumerate(refs):
            history = [
                _message(f"{index}-h{n}", f"{index}-h{n - 1}" if n else None, "user", f"old {n}")
                for n in range(stored)
            ]
            leaves[index] = (await store.append(ref, history)).leaf_id
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def writer(index: int) -> None:
        ref = refs[index]
        leaf = leaves[index]
        n = 0
        while time.perf_counter() < deadline:
            user = _message(f"{index}-{n}-u", leaf, "user", f"question {n} about the release")
            reply = _message(f"{index}-{n}-a", user["id"], "assistant", f"answer {n}, tagged")
            start = time.perf_counter()
            result = await store.append(ref, [user, reply], if_leaf=leaf)
            latencies.append(time.perf_counter() - start)
            leaf = result.leaf_id
            n += 1

    began = time.perf_counter()
    cpu = time.process_time()
    await asyncio.gather(*(writer(i) for i in range(sessions)))
    cpu = time.process_time() - cpu
    elapsed = time.perf_counter() - began
    return int(len(latencies) / elapsed), latencies, cpu / len(latencies) * 1e6


async def _listing(sessions: int, stored: int) -> None:
    """Every page of ``list_sessions`` over ``sessions`` file sessions of ``stored`` entries:
    the first listing, then three more of the unchanged files, then one after an append to
    each of ten of them."""
    with tempfile.TemporaryDirectory() as folder:
        store = await open_store(folder)
        leaves = []
        for i in range(sessions):
            ref = await store.create(cwd="/w", session_id=f"l{i:05d}")
            history = [
                _message(f"h{n}", f"h{n - 1}" if n else None, "user", f"old {n}")
                for n in range(stored)
            ]
            leaves.append((ref, (await store.append(ref, history)).leaf_id))
        fresh = await open_store(folder)  # nothing known of the files yet

        async def listing() -> float:
            start = time.perf_counter()
            cursor: str | None = None
            while True:
                page = await fresh.list_sessions(limit=500, cursor=cursor)
                cursor = page.cursor
                if cursor is None:
                    return (time.perf_counter() - start) * 1000

        first = await listing()
        again = [await listing() for _ in range(3)]
        for ref, leaf in leaves[:10]:
            await store.append(ref, [_message("new", leaf, "user", "one more")], if_leaf=leaf)
        after = await listing()
    print(f"list_sessions over {sessions} sessions of {stored} entries (ms):")
    print(f"first {first:.1f}; unchanged {min(again):.1f}; after 10 appended to {after:.1f}")


def _server_cpu(data: Path) -> float:
    """Seconds of CPU the server's postmaster and its ended backends have used (Linux)."""
    pid = (data / "postmaster.pid").read_text().split()[0]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
    return ticks / os.sysconf("SC_CLK_TCK")


async def _wal_bytes(url: str) -> int:
    """The bytes of WAL the server has written (all databases)."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        row = await (await conn.execute("SELECT wal_bytes FROM pg_stat_wal")).fetchone()
    assert row is not None
    return int(row[0])


async def _head_stats(url: str) -> tuple[str, str]:
    """The share of ``pi_sessions``' updates that were HOT, and its size with its indexes."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        cursor = await conn.execute(
            "SELECT n_tup_upd, n_tup_hot_upd, pg_total_relation_size(relid) "
            "FROM pg_stat_user_tables WHERE relname = 'pi_sessions'"
        )
        row = await cursor.fetchone()
    assert row is not None
    updates, hot, size = (int(v) for v in row)
    return f"{hot / updates:.0%}" if updates else "-", f"{size // 1024:,}"


def _p(values: list[float], q: float) -> float:
    """The nearest-rank percentile, in milliseconds."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def _profile(count: int, profile_out: str | None) -> None:
    import cProfile

    import psycopg

    with running_server() as server:
        if isinstance(server, str):
            sys.exit(server)
        database = server.new_database()
        url = server.url(database)
        warm = await open_store(url, max_connections=1)
        await warm.migrate()
        ref = await warm.create(cwd="/w", session_id="profile")
        await warm.aclose()
        entries = [
            (
                _message(f"{n}-u", f"{n - 1}-a" if n else None, "user", f"question {n} here"),
                _message(f"{n}-a", f"{n}-u", "assistant", f"answer {n}, tagged"),
            )
            for n in range(count)
        ]

        async def commits() -> int:
            async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
                cursor = await conn.execute(
                    "SELECT xact_commit FROM pg_stat_database WHERE datname = %s", (database,)
                )
                row = await cursor.fetchone()
                assert row is not None
                return int(row[0])

        # a backend's counters reach pg_stat_database when it ends: count between two closes
        before = await commits()
        store = await open_store(url, max_connections=1)
        await store.load(ref)  # the schema check, and the pool is warm
        profiler = cProfile.Profile(time.process_time) if profile_out else None
        cpu = time.process_time()
        wall = time.perf_counter()
        leaf: str | None = None
        if profiler is not None:
            profiler.enable()
        for pair in entries:
            leaf = (await store.append(ref, list(pair), if_leaf=leaf)).leaf_id
        if profiler is not None:
            profiler.disable()
        cpu = time.process_time() - cpu
        wall = time.perf_counter() - wall
        await store.aclose()
        await asyncio.sleep(0.5)
        after = await commits()
        if profiler is not None and profile_out:
            profiler.dump_stats(profile_out)
    # besides the appends: the first probe's statement, the schema check and the load
    transactions = after - before - 3
    # the probe of `commits` itself is one more transaction
    print(f"{count} appends of 2 entries to one session, one connection")
    print(f"transactions (round trips) per append: {transactions / count:.2f}")
    print(
        f"client CPU per append: {cpu / count * 1e6:.0f} us; wall per append: "
        f"{wall / count * 1e3:.2f} ms"
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--sessions", default="1,8,32")
    parser.add_argument(
        "--connections", type=int, default=32, help="the PostgreSQL pool's most connections"
    )
    parser.add_argument(
        "--postgres-only", action="store_true", help="without the file store's baseline"
    )
    parser.add_argument(
        "--file-only", action="store_true", help="the file store alone (no PostgreSQL server)"
    )
    parser.add_argument(
        "--stored", type=int, default=0, metavar="N", help="entries each session holds first"
    )
    parser.add_argument(
        "--list",
        type=int,
        default=0,
        metavar="N",
        help="instead: N file sessions of --stored entries, each listing's time (ms)",
    )
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument("--cprofile", metavar="FILE", help="with --profile: cProfile stats")
    args = parser.parse_args()
    if args.profile:
        await _profile(args.profile, args.cprofile)
        return
    if args.list:
        await _listing(args.list, args.stored)
        return
    counts = [int(c) for c in args.sessions.split(",")]
    rows: list[_Row] = []
    if args.file_only:
        for count in counts:
            rows.append(await _file_row("file", count, args.seconds, args.stored))
        _print(rows)
        return
    with running_server() as server:
        if isinstance(server, str):
            sys.exit(server)
        for count in counts:
            url = server.url(server.new_database())
            server_cpu = _server_cpu(server.data)
            wal = await _wal_bytes(url)
            store = await open_store(url, max_connections=min(count, args.connections))
            rate, lat, cpu = await _run(store, count, args.seconds, args.stored)
            await store.aclose()
            await asyncio.sleep(0.3)  # the backends end and are counted
            server_cpu = (_server_cpu(server.data) - server_cpu) / len(lat) * 1e6
            hot, size = await _head_stats(url)
            wal = (await _wal_bytes(url) - wal) // len(lat)
            rows.append(
                (
                    "postgresql",
                    count,
                    rate,
                    _p(lat, 0.5),
                    _p(lat, 0.99),
                    cpu,
                    f"{server_cpu:.0f}",
                    hot,
                    size,
                    f"{wal:,}",
                )
            )
            if args.postgres_only:
                continue
            rows.append(await _file_row("file (baseline)", count, args.seconds, args.stored))
    _print(rows)


_Row = tuple[str, int, int, float, float, float, str, str, str, str]


async def _file_row(name: str, count: int, seconds: float, stored: int) -> _Row:
    """The file store's row: ``count`` sessions appended to in a fresh directory."""
    with tempfile.TemporaryDirectory() as folder:
        files = await open_store(folder)
        rate, lat, cpu = await _run(files, count, seconds, stored)
    return (name, count, rate, _p(lat, 0.5), _p(lat, 0.99), cpu, "-", "-", "-", "-")


def _print(rows: list[_Row]) -> None:
    print(
        "| store | sessions | appends/s (2 entries each) | p50 ms | p99 ms "
        "| client CPU us/append | server CPU us/append | HOT head updates | pi_sessions kB "
        "| WAL bytes/append |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, count, rate, p50, p99, cpu, server, hot, size, wal in rows:
        print(
            f"| {name} | {count} | {rate:,} | {p50:.1f} | {p99:.1f} | {cpu:.0f} | {server} "
            f"| {hot} | {size} | {wal} |"
        )


if __name__ == "__main__":
    asyncio.run(main())
