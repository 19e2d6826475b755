"""Agent overhead per turn, without the model: one prompt answered instantly by a scripted model,
on in-memory sessions of growing size.

    .venv/bin/python benchmarks/bench_agent.py [--sizes 200 2000 10000] [--repeat 5]

What is timed is everything ``AgentSession.run`` does around the model call: the pre-prompt
compaction check, the system-prompt diff, persisting, projecting, the transform chain,
``convert_to_llm``, cache fingerprinting and the post-run check. A turn should cost far less
than any real model round trip, and grow at most linearly with the context. The CPU column
(process time) is the one to compare on a busy machine, where wall time includes waiting.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pi_context.agent.session import AgentSession
from pi_context.messages import assistant_message, empty_usage, user_message
from pi_context.model import ModelInfo
from pi_context.testing import ScriptedModel, reply

INFO = ModelInfo(
    provider="scripted",
    id="scripted-model",
    api="scripted",
    context_window=10_000_000,
    max_tokens=1000,
)


async def measure(size: int, repeat: int) -> list[tuple[float, float]]:
    """``(wall seconds, CPU seconds)`` of each of ``repeat`` turns at ``size`` messages."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "agent").mkdir()
        model = ScriptedModel([reply("ok", input_tokens=10)] * (repeat + 1), model_info=INFO)
        sess = await AgentSession.create(
            cwd=root, model=model, agent_dir=root / "agent", trusted=True
        )
        usage = empty_usage()
        usage["input"], usage["totalTokens"] = 10, 10
        for n in range(size // 2):
            sess.session.append_message(user_message(f"question {n} " * 20))
            sess.session.append_message(
                assistant_message(
                    [{"type": "text", "text": f"answer {n} " * 40}],
                    api="scripted",
                    provider="scripted",
                    model="scripted-model",
                    usage=usage,
                )
            )
        await sess.run("warm up")
        times = []
        for _ in range(repeat):
            start, cpu = time.perf_counter(), time.process_time()
            await sess.run("next")
            times.append((time.perf_counter() - start, time.process_time() - cpu))
        return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 2000, 10000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print("| messages | median ms/turn | best ms/turn | median CPU ms/turn |")
    print("|---:|---:|---:|---:|")
    for size in args.sizes:
        times = asyncio.run(measure(size, args.repeat))
        wall = [w for w, _ in times]
        cpu = statistics.median(c for _, c in times)
        print(
            f"| {size} | {statistics.median(wall) * 1000:.1f} | {min(wall) * 1000:.1f} "
            f"| {cpu * 1000:.1f} |"
        )
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
