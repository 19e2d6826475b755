"""The agent on a stored session: what a prompt costs per store, and whether the event loop
serves other tasks during a file session's end-of-turn ``fsync`` (on the loop, in a thread).

Every prompt is one turn of a scripted model (no network), so the figures are the agent's own
work plus the session's writes. Baselines of the same run: the agent on a plain session file
(for the cost per prompt), and the end-of-turn ``fsync`` made on the event loop, as it was
before it moved to a worker thread (whether the loop serves other tasks meanwhile). The files live under the checkout (a real
disk: ``/tmp`` may be a tmpfs, where ``fsync`` costs nothing); PostgreSQL is the tests'
temporary local server (Unix socket).

    .venv/bin/python benchmarks/bench_stored_agent.py [--prompts 40]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.store.pg_server import running_server  # noqa: E402

from pi_context.agent._state import AgentState  # noqa: E402
from pi_context.agent.session import AgentSession  # noqa: E402
from pi_context.store import SessionStore, open_store  # noqa: E402
from pi_context.testing import ScriptedModel, reply  # noqa: E402


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _prompts(
    make: Callable[[ScriptedModel], Awaitable[AgentSession]], prompts: int
) -> tuple[list[float], list[float]]:
    """Seconds per ``run()``, and when a 1 ms ticker on the event loop ran (``perf_counter``):
    it runs only while nothing else holds the loop."""
    model = ScriptedModel([reply(f"answer {i} " * 20) for i in range(prompts)])
    sess = await make(model)
    ticks: list[float] = []
    running = True

    async def ticker() -> None:
        while running:
            await asyncio.sleep(0.001)
            ticks.append(time.perf_counter())

    tick = asyncio.ensure_future(ticker())
    times = []
    for i in range(prompts):
        start = time.perf_counter()
        await sess.run(f"question {i} " * 20)
        times.append(time.perf_counter() - start)
    running = False
    await tick
    await sess.aclose()
    return times, ticks


async def _on_the_loop(self: AgentState) -> None:
    """The end-of-turn durability as it was: a file session's ``fsync`` on the event loop."""
    if self.binding is not None:
        await self.binding.commit()
        return
    self.session.sync()


async def main(prompts: int) -> None:
    options: dict[str, Any] = {"trusted": True, "recall": "off"}
    with tempfile.TemporaryDirectory(dir=ROOT, prefix=".bench-stored-") as folder:
        base = Path(folder)
        (base / "agent").mkdir()
        (base / "proj").mkdir()
        options.update(agent_dir=base / "agent", cwd=base / "proj")
        counter = iter(range(1_000_000))

        def file_session() -> Callable[[ScriptedModel], Awaitable[AgentSession]]:
            async def make(model: ScriptedModel) -> AgentSession:
                path = base / f"file-{next(counter)}.jsonl"
                return await AgentSession.create(session_file=path, model=model, **options)

            return make

        def stored(store: SessionStore) -> Callable[[ScriptedModel], Awaitable[AgentSession]]:
            async def make(model: ScriptedModel) -> AgentSession:
                return await AgentSession.create(
                    store=store, session_id=f"s{next(counter)}", model=model, **options
                )

            return make

        print(f"end-of-turn fsync of a file session, {prompts} one-turn prompts:")
        moved = AgentState.make_durable
        for label, durable in (
            ("on the event loop (before)", _on_the_loop),
            ("worker thread", moved),
        ):
            spans: list[tuple[float, float]] = []

            async def timed(self: AgentState, durable: Any = durable, spans: Any = spans) -> None:
                start = time.perf_counter()
                await durable(self)
                spans.append((start, time.perf_counter()))

            AgentState.make_durable = timed  # type: ignore[method-assign]
            times, ticks = await _prompts(file_session(), prompts)
            served = sum(1 for t in ticks for a, b in spans if a < t < b)
            wall = statistics.mean(b - a for a, b in spans)
            print(
                f"  {label:28} fsync {wall * 1000:5.2f} ms mean; 1 ms ticks the loop served "
                f"during them: {served:4} ({served / len(spans):.1f} per fsync); "
                f"prompt {statistics.mean(times) * 1000:5.1f} ms"
            )
        AgentState.make_durable = moved  # type: ignore[method-assign]

        print(f"cost of a prompt ({prompts} one-turn prompts; mean, p99):")
        times, _ = await _prompts(file_session(), prompts)
        rows = [("session file (baseline)", times)]
        with running_server() as server:
            urls = ["memory:", f"file:{base / 'store'}"]
            if not isinstance(server, str):
                urls.append(server.url(server.new_database()))
            for url in urls:
                store = await open_store(url)
                await store.migrate()
                times, _ = await _prompts(stored(store), prompts)
                await store.aclose()
                name = url.split(":", 1)[0] if "://" not in url else "postgresql"
                rows.append((f"stored, {name} store", times))
        for label, times in rows:
            print(
                f"  {label:28} {statistics.mean(times) * 1000:6.1f} ms  "
                f"p99 {_p(times, 0.99) * 1000:6.1f} ms"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=40)
    asyncio.run(main(parser.parse_args().prompts))
