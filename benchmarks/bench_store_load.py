"""What reading a stored session's file costs the PostgreSQL store: the statement ``load`` and
``export_bytes`` send now (:data:`pi_context.store.postgres._LOAD`: a row per line, in the
primary key's order, joined on the client) beside the one before it (the file as one
``string_agg(... ORDER BY seq)`` value), on one connection, interleaved round by round, both
checked to give the same bytes. Per read: wall time, the client's CPU (``time.process_time``)
and the server's (its backend's CPU from ``/proc``: Linux, the server on this machine).

``--parse`` adds the reads a ``load`` does after the statement, on the same rows: the lines
joined into the file's bytes and parsed (``load`` before branch ``readfast``) beside the
lines handed to the reader as they are (:class:`~pi_context.session._load.scan.SplitBytes`,
``load`` now), both on the loop (no worker thread), checked to find the same entries.

Sessions of 1,000 and 10,000 entries of two shapes: the chat turns of
``bench_store_frameworks.py`` (about 1.3 kB a line) and the short entries of
``bench_store_recall.py`` (about 360 bytes a line).

    nice .venv/bin/python benchmarks/bench_store_load.py [--rounds 60] [--parse]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from tests.store.pg_server import running_server  # noqa: E402

from bench_store_frameworks import PiContext, Texts  # noqa: E402
from bench_store_recall import session_bytes  # noqa: E402
from pi_context.session._load.scan import SplitBytes  # noqa: E402
from pi_context.store import open_store  # noqa: E402
from pi_context.store.base import parse_file  # noqa: E402
from pi_context.store.postgres import _LOAD, _file_of, _lines_of  # noqa: E402

_BEFORE = """
SELECT h.prefix, h.tail_newline,
       (SELECT string_agg(coalesce(e.raw, convert_to(e.line, 'UTF8')), '\\x0a'::bytea
                          ORDER BY e.seq)
          FROM pi_entries e WHERE e.tenant_id = h.tenant_id AND e.session_id = h.session_id)
  FROM pi_sessions h WHERE h.tenant_id = %s AND h.session_id = %s
"""


async def _before(conn: Any, key: tuple[str, str]) -> bytes:
    cursor = await conn.execute(_BEFORE, key, binary=True)
    prefix, tail_newline, body = await cursor.fetchone()
    parts = [prefix.encode("utf-8"), *([bytes(body)] if body is not None else [])]
    return b"\n".join([*parts, b""] if tail_newline else parts)


async def _now(conn: Any, key: tuple[str, str]) -> bytes:
    cursor = await conn.execute(_LOAD, key, binary=True)
    return _file_of(await cursor.fetchall())


async def _joined_parsed(conn: Any, key: tuple[str, str]) -> int:
    """The bytes parsed (their size, as the parse counted it)."""
    cursor = await conn.execute(_LOAD, key, binary=True)
    return parse_file(_file_of(await cursor.fetchall()), "b").size


async def _lines_parsed(conn: Any, key: tuple[str, str]) -> int:
    cursor = await conn.execute(_LOAD, key, binary=True)
    return parse_file(SplitBytes(_lines_of(await cursor.fetchall())), "b").size


def _cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def main() -> None:
    import psycopg

    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=60, help="reads of each 1k session")
    parser.add_argument("--parse", action="store_true", help="the rows joined or as lines, parsed")
    args = parser.parse_args()
    ways: dict[str, Callable[[Any, tuple[str, str]], Awaitable[bytes | int]]] = {
        "before: string_agg(... ORDER BY seq)": _before,
        "now: a row per line": _now,
    }
    if args.parse:
        ways = {
            "rows joined, bytes parsed (before)": _joined_parsed,
            "rows as lines, lines parsed (now)": _lines_parsed,
        }
    with running_server() as server:
        if isinstance(server, str):
            sys.exit(server)
        url = server.url(server.new_database())
        chat = PiContext(Texts())
        await chat.open(url, 2)
        sessions: list[tuple[str, int, str]] = []
        for items in (1000, 10_000):
            await chat.new_session(f"chat-{items}")
            await chat.seed(f"chat-{items}", items)
            sessions.append(("chat turns", items, f"chat-{items}"))
        store = await open_store(url)
        for items in (1000, 10_000):
            data, _ = session_bytes(0, items)
            ref = await store.import_bytes(data.replace(b"recall-00000", b"short-%d" % items))
            sessions.append(("short entries", items, ref.id))
        conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
        cursor = await conn.execute("SELECT pg_backend_pid()")
        row = await cursor.fetchone()
        assert row is not None
        pid = int(row[0])
        print(f"load average {os.getloadavg()[0]:.1f}\n")
        print(
            "| session | entries | statement | wall p50 / min ms | client CPU p50 ms "
            "| server CPU mean ms |"
        )
        print("|---|---:|---|---:|---:|---:|")
        for shape, items, sid in sessions:
            key = ("", sid)
            expected = await _before(conn, key)
            rounds = args.rounds if items <= 1000 else max(3, args.rounds // 4)
            wall: dict[str, list[float]] = {name: [] for name in ways}
            cpu: dict[str, list[float]] = {name: [] for name in ways}
            server_cpu = dict.fromkeys(ways, 0.0)
            for _ in range(rounds):
                for name, read in ways.items():
                    before_server = _cpu_of(pid)
                    start, start_cpu = time.perf_counter(), time.process_time()
                    got = await read(conn, key)
                    wall[name].append(time.perf_counter() - start)
                    cpu[name].append(time.process_time() - start_cpu)
                    server_cpu[name] += _cpu_of(pid) - before_server
                    # the bytes, or (a parse) how many bytes the parse read
                    assert got == (len(expected) if isinstance(got, int) else expected), name
            for name in ways:
                print(
                    f"| {shape} | {items:,} | {name} "
                    f"| {statistics.median(wall[name]) * 1e3:.1f} / {min(wall[name]) * 1e3:.1f} "
                    f"| {statistics.median(cpu[name]) * 1e3:.2f} "
                    f"| {server_cpu[name] / rounds * 1e3:.2f} |"
                )
        await conn.close()
        await store.aclose()
        await chat.close()


if __name__ == "__main__":
    asyncio.run(main())
