"""pi-context's PostgreSQL store beside two frameworks' own PostgreSQL persistence, on one server.

One temporary PostgreSQL cluster (the tests' own: Unix socket, ``fsync`` and
``synchronous_commit`` on), one database per contender, the same conversation through each:

* ``pi_context``: ``PostgresStore`` (psycopg 3); a turn is one ``append`` of the user message
  and the assistant reply as pi message entries, under ``if_leaf``;
* ``openai-agents``: ``SQLAlchemySession`` (SQLAlchemy async on asyncpg); a turn is one
  ``add_items`` of the user item and the assistant's output message;
* ``langgraph``: ``AsyncPostgresSaver`` (``langgraph-checkpoint-postgres``) under a one-node
  ``StateGraph(MessagesState)`` whose node returns the scripted reply; a turn is one
  ``ainvoke`` with the user message on the thread (LangGraph's default durability).

Figures: turns/s written into one session and into several at once (one task per session, one
process); the latency of reading a whole history of 1,000 and 10,000 items (``load``,
``get_items``, ``aget_tuple``; the histories are written in batches first); the size on disk
(``pg_total_relation_size`` of each one's tables) after the single-session turns.

Messages are random words from a fixed vocabulary (seeded): a user message of 40-80 words, a
reply of 150-300, like a chat assistant's.

The extra packages are not dependencies of pi-context (benchmark only)::

    .venv/bin/pip install 'openai-agents[sqlalchemy]>=0.24,<0.25' asyncpg \
        langgraph-checkpoint-postgres
    nice .venv/bin/python benchmarks/bench_store_frameworks.py [--turns 1000] [--sessions 8]
    nice .venv/bin/python benchmarks/bench_store_frameworks.py --quick   # about 2 minutes
    nice .venv/bin/python benchmarks/bench_store_frameworks.py --reads-only --only pi,openai-agents

``--reads-only`` measures the reads alone, the contenders' reads interleaved round by round
(each round reads every contender's history once, in turn), so that a machine whose load
drifts during the run weighs on each alike; it also gives the client CPU per read
(``time.process_time``: every thread of the process).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.store.pg_server import PgServer, running_server  # noqa: E402

from pi_context.store import SessionStore, open_store  # noqa: E402

_SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "sa",
    "ti",
    "vo",
    "de",
    "pe",
    "gra",
    "sto",
    "bel",
    "ort",
]


def _vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    return ["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4))) for _ in range(size)]


class Texts:
    """The conversation's texts: turn ``n``'s user message and reply, the same for everyone."""

    def __init__(self, seed: int = 7) -> None:
        rng = random.Random(seed)
        words = _vocabulary(rng)
        self._user = [" ".join(rng.choices(words, k=rng.randint(40, 80))) + "?" for _ in range(64)]
        self._reply = [
            " ".join(rng.choices(words, k=rng.randint(150, 300))) + "." for _ in range(64)
        ]

    def user(self, n: int) -> str:
        return f"[{n}] {self._user[n % 64]}"

    def reply(self, n: int) -> str:
        return f"[{n}] {self._reply[(n * 7) % 64]}"


class Contender:
    name = ""
    tables: tuple[str, ...] = ()

    async def open(self, url: str, connections: int) -> None:
        raise NotImplementedError

    async def new_session(self, sid: str) -> None:
        raise NotImplementedError

    async def turn(self, sid: str, n: int) -> None:
        raise NotImplementedError

    async def seed(self, sid: str, items: int) -> None:
        """Write ``items`` history items (user/assistant alternating) in large batches."""
        raise NotImplementedError

    async def read(self, sid: str) -> int:
        """Read the whole history; the number of items read."""
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError


class PiContext(Contender):
    name = "pi_context PostgresStore"
    tables = ("pi_sessions", "pi_entries", "pi_leases", "pi_store_schema")

    def __init__(self, texts: Texts) -> None:
        self.texts = texts
        self.leaf: dict[str, str | None] = {}
        self.refs: dict[str, Any] = {}

    async def open(self, url: str, connections: int) -> None:
        self.store: SessionStore = await open_store(url, max_connections=connections)
        await self.store.migrate()

    async def new_session(self, sid: str) -> None:
        self.refs[sid] = await self.store.create(cwd="/srv/app", session_id=sid)
        self.leaf[sid] = None

    def _entries(self, sid: str, n: int, parent: str | None) -> list[dict[str, Any]]:
        user = _pi_message(f"{sid}-{n}-u", parent, "user", self.texts.user(n))
        reply = _pi_message(f"{sid}-{n}-a", user["id"], "assistant", self.texts.reply(n))
        return [user, reply]

    async def turn(self, sid: str, n: int) -> None:
        batch = self._entries(sid, n, self.leaf[sid])
        result = await self.store.append(self.refs[sid], batch, if_leaf=self.leaf[sid])
        self.leaf[sid] = result.leaf_id

    async def seed(self, sid: str, items: int) -> None:
        for start in range(0, items // 2, 100):
            batch: list[dict[str, Any]] = []
            for n in range(start, min(items // 2, start + 100)):
                batch += self._entries(sid, n, batch[-1]["id"] if batch else self.leaf[sid])
            result = await self.store.append(self.refs[sid], batch, if_leaf=self.leaf[sid])
            self.leaf[sid] = result.leaf_id

    async def read(self, sid: str) -> int:
        stored = await self.store.load(self.refs[sid])  # every line read and decoded
        return len(stored.scan.entries)

    async def close(self) -> None:
        await self.store.aclose()


def _pi_message(entry_id: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    body: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}]}
    if role == "assistant":
        body.update(
            api="openai-responses",
            provider="openai",
            model="gpt-5-mini",
            usage={
                "input": 1200,
                "output": 300,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 1500,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            stopReason="stop",
        )
    body["timestamp"] = 1764806400000
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-12-04T00:00:00.000Z",
        "message": body,
    }


class OpenAIAgents(Contender):
    name = "openai-agents SQLAlchemySession"
    tables = ("agent_sessions", "agent_messages")

    def __init__(self, texts: Texts) -> None:
        self.texts = texts
        self.sessions: dict[str, Any] = {}

    async def open(self, url: str, connections: int) -> None:
        from sqlalchemy.ext.asyncio import create_async_engine

        # asyncpg takes the socket directory as the host
        self.engine = create_async_engine(
            url.replace("postgresql://", "postgresql+asyncpg://", 1),
            pool_size=connections,
            max_overflow=0,
        )

    async def new_session(self, sid: str) -> None:
        from agents.extensions.memory import SQLAlchemySession

        self.sessions[sid] = SQLAlchemySession(sid, engine=self.engine, create_tables=True)

    def _items(self, sid: str, n: int) -> list[Any]:
        user = {"role": "user", "content": self.texts.user(n)}
        reply = {
            "type": "message",
            "id": f"msg_{sid}_{n}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": self.texts.reply(n), "annotations": []}],
        }
        return [user, reply]

    async def turn(self, sid: str, n: int) -> None:
        await self.sessions[sid].add_items(self._items(sid, n))

    async def seed(self, sid: str, items: int) -> None:
        for start in range(0, items // 2, 100):
            batch: list[Any] = []
            for n in range(start, min(items // 2, start + 100)):
                batch += self._items(sid, n)
            await self.sessions[sid].add_items(batch)

    async def read(self, sid: str) -> int:
        return len(await self.sessions[sid].get_items())

    async def close(self) -> None:
        await self.engine.dispose()


class LangGraph(Contender):
    name = "langgraph AsyncPostgresSaver"
    tables = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")

    def __init__(self, texts: Texts) -> None:
        self.texts = texts

    async def open(self, url: str, connections: int) -> None:
        from langchain_core.messages import AIMessage
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from langgraph.graph import START, MessagesState, StateGraph
        from psycopg.rows import dict_row
        from psycopg_pool import AsyncConnectionPool

        self.pool: Any = AsyncConnectionPool(
            url,
            max_size=connections,
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
            open=False,
        )
        await self.pool.open(wait=True)
        self.saver = AsyncPostgresSaver(self.pool)
        await self.saver.setup()
        texts = self.texts

        def model(state: MessagesState) -> dict[str, Any]:
            n = (len(state["messages"]) - 1) // 2
            return {"messages": [AIMessage(texts.reply(n))]}

        builder = StateGraph(MessagesState)
        builder.add_node("model", model)
        builder.add_edge(START, "model")
        self.graph = builder.compile(checkpointer=self.saver)

    async def new_session(self, sid: str) -> None:
        return None

    async def turn(self, sid: str, n: int) -> None:
        from langchain_core.messages import HumanMessage

        config: Any = {"configurable": {"thread_id": sid}}
        await self.graph.ainvoke({"messages": [HumanMessage(self.texts.user(n))]}, config)

    async def seed(self, sid: str, items: int) -> None:
        from langchain_core.messages import AIMessage, HumanMessage

        # one checkpoint: each checkpoint stores the whole list again
        config: Any = {"configurable": {"thread_id": sid}}
        batch: list[Any] = []
        for n in range(items // 2):
            batch += [HumanMessage(self.texts.user(n)), AIMessage(self.texts.reply(n))]
        await self.graph.aupdate_state(config, {"messages": batch}, as_node="model")

    async def read(self, sid: str) -> int:
        found = await self.saver.aget_tuple({"configurable": {"thread_id": sid}})
        assert found is not None
        return len(found.checkpoint["channel_values"]["messages"])

    async def close(self) -> None:
        await self.pool.close()


CONTENDERS: dict[str, Callable[[Texts], Contender]] = {
    "pi": PiContext,
    "openai-agents": OpenAIAgents,
    "langgraph": LangGraph,
}


def _p(values: list[float], q: float) -> float:
    """The nearest-rank percentile, in milliseconds."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def _measure(
    server: PgServer, contender: Contender, args: argparse.Namespace
) -> dict[str, Any]:
    database = server.new_database()
    await contender.open(server.url(database), max(args.sessions, 2))
    row: dict[str, Any] = {"name": contender.name}

    await contender.new_session("one")
    began = time.perf_counter()
    for n in range(args.turns):
        await contender.turn("one", n)
    row["one"] = args.turns / (time.perf_counter() - began)
    tables = ", ".join(f"'{t}'" for t in contender.tables)
    row["bytes"] = int(
        server.psql(
            f"SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
            f"WHERE c.relkind = 'r' AND c.relname IN ({tables})",
            database,
        )
    )

    sids = [f"many-{i}" for i in range(args.sessions)]
    for sid in sids:
        await contender.new_session(sid)

    async def writer(sid: str) -> None:
        for n in range(args.concurrent_turns):
            await contender.turn(sid, n)

    began = time.perf_counter()
    await asyncio.gather(*(writer(sid) for sid in sids))
    row["many"] = args.sessions * args.concurrent_turns / (time.perf_counter() - began)

    for items, reads in ((1000, args.reads), (10_000, max(3, args.reads // 3))):
        sid = f"read-{items}"
        await contender.new_session(sid)
        await contender.seed(sid, items)
        latencies: list[float] = []
        for _ in range(reads):
            start = time.perf_counter()
            count = await contender.read(sid)
            latencies.append(time.perf_counter() - start)
            assert count == items, (contender.name, count, items)
        row[f"read{items}"] = (_p(latencies, 0.5), _p(latencies, 0.95))
    await contender.close()
    return row


async def _interleaved_reads(
    server: PgServer, contenders: list[Contender], args: argparse.Namespace
) -> list[dict[str, Any]]:
    """Each contender's 1k and 10k histories, read in interleaved rounds."""
    rows: list[dict[str, Any]] = []
    for contender in contenders:
        await contender.open(server.url(server.new_database()), 4)
        for items in (1000, 10_000):
            await contender.new_session(f"read-{items}")
            await contender.seed(f"read-{items}", items)
        rows.append({"name": contender.name})
    for items, reads in ((1000, args.reads), (10_000, max(3, args.reads // 3))):
        sid = f"read-{items}"
        wall: list[list[float]] = [[] for _ in contenders]
        cpu: list[list[float]] = [[] for _ in contenders]
        for _ in range(reads):
            for n, contender in enumerate(contenders):
                start, start_cpu = time.perf_counter(), time.process_time()
                count = await contender.read(sid)
                wall[n].append(time.perf_counter() - start)
                cpu[n].append(time.process_time() - start_cpu)
                assert count == items, (contender.name, count, items)
        for n, row in enumerate(rows):
            row[f"read{items}"] = (_p(wall[n], 0.5), _p(wall[n], 0.95), _p(cpu[n], 0.5))
    for contender in contenders:
        await contender.close()
    return rows


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=1000, help="turns into one session")
    parser.add_argument("--sessions", type=int, default=8, help="sessions written at once")
    parser.add_argument("--concurrent-turns", type=int, default=100, help="turns per session")
    parser.add_argument("--reads", type=int, default=30, help="reads of the 1k history")
    parser.add_argument("--only", default=",".join(CONTENDERS), help="pi,openai-agents,langgraph")
    parser.add_argument("--quick", action="store_true", help="--turns 200 --concurrent-turns 25")
    parser.add_argument(
        "--reads-only", action="store_true", help="only the reads, interleaved (default 60)"
    )
    args = parser.parse_args()
    if args.quick:
        args.turns, args.concurrent_turns, args.reads = 200, 25, 15
    texts = Texts()
    rows: list[dict[str, Any]] = []
    with running_server() as server:
        if isinstance(server, str):
            sys.exit(server)
        version = server.psql("SHOW server_version")
        if args.reads_only:
            reads = 60 if args.reads == 30 and not args.quick else args.reads
            args.reads = reads
            contenders = [CONTENDERS[key](texts) for key in args.only.split(",")]
            rows = await _interleaved_reads(server, contenders, args)
            print(f"PostgreSQL {version}; reads of whole histories, interleaved, {reads} rounds")
            print(
                f"of 1k items, {max(3, reads // 3)} of 10k; load average {os.getloadavg()[0]:.1f}.\n"
            )
            print(
                "| store | read 1k items p50 / p95 ms | client CPU p50 ms "
                "| read 10k items p50 / p95 ms | client CPU p50 ms |"
            )
            print("|---|---:|---:|---:|---:|")
            for row in rows:
                r1, r10 = row["read1000"], row["read10000"]
                print(
                    f"| {row['name']} | {r1[0]:.1f} / {r1[1]:.1f} | {r1[2]:.1f} "
                    f"| {r10[0]:.1f} / {r10[1]:.1f} | {r10[2]:.1f} |"
                )
            return
        for key in args.only.split(","):
            contender = CONTENDERS[key](texts)
            print(f"... {contender.name}", file=sys.stderr, flush=True)
            rows.append(await _measure(server, contender, args))
    print(f"PostgreSQL {version}; {args.turns} turns into one session; {args.sessions} sessions x ")
    print(f"{args.concurrent_turns} turns at once; reads of whole histories.\n")
    print(
        f"| store | turns/s, 1 session | turns/s, {args.sessions} sessions "
        f"| read 1k items p50 / p95 ms | read 10k items p50 / p95 ms "
        f"| size after {args.turns} turns |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        r1, r10 = row["read1000"], row["read10000"]
        print(
            f"| {row['name']} | {row['one']:,.0f} | {row['many']:,.0f} "
            f"| {r1[0]:.1f} / {r1[1]:.1f} | {r10[0]:.1f} / {r10[1]:.1f} "
            f"| {row['bytes'] / 1e6:,.1f} MB |"
        )


if __name__ == "__main__":
    asyncio.run(main())
