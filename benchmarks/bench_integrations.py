"""The framework adapters' hooks on a long history: cost per call and how long they hold the loop.

openai-agents calls ``PiSession.add_items`` after each turn, pydantic-ai calls
``PiContext.before_model_request`` and LangChain ``PiSummarizationMiddleware.abefore_model``
before each model request. This benchmark builds a session of ``--items`` openai-agents items
(about a quarter each user messages, calls, their outputs and answers; the other two adapters
get the same conversation in their own message types, each answer with a reported usage),
with compaction off (a window far above the history), and times:

* ``add_items``: one turn (a call and its output) per call, ``--calls`` times, while a probe
  task measures how late ``asyncio.sleep(0.001)`` wakes up (the longest time the hook kept the
  event loop from running anything else);
* ``get_items`` after an ``add_items`` (what a run reads first; the input filter reads the same
  history before each model request), 5 times;
* each adapter's request hook once the session holds the history (``--requests`` requests,
  one new message each).

The same script runs in the checkout given by ``--baseline`` (its own virtual environment and
source) in the same run, so the ratio holds on a loaded machine::

    .venv/bin/python benchmarks/bench_integrations.py --baseline /work/main
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any


def _items(count: int) -> list[dict[str, Any]]:
    """``count`` openai-agents items: user, call, output, answer, repeated."""
    out: list[dict[str, Any]] = []
    turn = 0
    while len(out) < count:
        call = f"call_{turn}"
        out += [
            {"role": "user", "content": f"please read file_{turn}.py and fix the bug"},
            {
                "arguments": json.dumps({"path": f"file_{turn}.py"}),
                "call_id": call,
                "name": "read_file",
                "type": "function_call",
                "id": call,
            },
            {"call_id": call, "output": "x = 1\n" * 40, "type": "function_call_output"},
            {
                "id": f"msg_{turn}",
                "content": [
                    {
                        "annotations": [],
                        "text": f"done {turn}",
                        "type": "output_text",
                        "logprobs": [],
                    }
                ],
                "role": "assistant",
                "status": "completed",
                "type": "message",
            },
        ]
        turn += 1
    return out[:count]


class _Probe:
    """The longest time the event loop was kept from waking a 1 ms sleeper."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._stop = False

    async def run(self) -> None:
        while not self._stop:
            start = time.perf_counter()
            await asyncio.sleep(0.001)
            self.worst = max(self.worst, time.perf_counter() - start - 0.001)

    def stop(self) -> None:
        self._stop = True


def _stats(times: list[float]) -> dict[str, float]:
    return {
        "mean_ms": statistics.fmean(times) * 1000,
        "median_ms": statistics.median(times) * 1000,
        "max_ms": max(times) * 1000,
    }


async def _openai_agents(directory: Path, count: int, calls: int) -> dict[str, Any]:
    from pi_context.integrations.openai_agents import OpenAIAgentsCodec, PiSession
    from pi_context.session import Session

    path = directory / "agents.jsonl"
    session = Session.create(path, cwd=str(directory))
    session.fsync = False
    codec = OpenAIAgentsCodec(session.now_ms)
    for message in codec.to_pi(_items(count)):
        session.append_message(message)
    del session
    pi = PiSession(session_file=path, context_window=10**9)
    await pi.get_items()  # the runner reads the history first
    probe = _Probe()
    task = asyncio.create_task(probe.run())
    await asyncio.sleep(0.01)
    times: list[float] = []
    for turn in range(calls):
        call = f"new_{turn}"
        items: list[Any] = [
            {
                "arguments": "{}",
                "call_id": call,
                "name": "read_file",
                "type": "function_call",
                "id": call,
            },
            {"call_id": call, "output": "ok", "type": "function_call_output"},
        ]
        start = time.perf_counter()
        await pi.add_items(items)
        times.append(time.perf_counter() - start)
        await asyncio.sleep(0)
    reads: list[float] = []
    for turn in range(5):  # a model request reads the history after the turn's items
        await pi.add_items([{"role": "user", "content": f"and now {turn}"}])
        start = time.perf_counter()
        await pi.get_items()
        reads.append(time.perf_counter() - start)
    probe.stop()
    await task
    return {
        "add_items": _stats(times),
        "get_items": _stats(reads),
        "loop_held_ms": probe.worst * 1000,
    }


async def _pydantic_ai(directory: Path, count: int, calls: int) -> dict[str, Any]:
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.usage import RequestUsage

    from pi_context.integrations.pydantic_ai import PiContext

    messages: list[ModelMessage] = []
    for turn in range(count // 4):
        call = f"call_{turn}"
        messages += [
            ModelRequest(parts=[UserPromptPart(f"please read file_{turn}.py")]),
            ModelResponse(parts=[ToolCallPart("read_file", {"path": f"f{turn}"}, call)]),
            ModelRequest(parts=[ToolReturnPart("read_file", "x = 1\n" * 40, call)]),
            ModelResponse(
                parts=[TextPart(f"done {turn}")],
                usage=RequestUsage(input_tokens=100, output_tokens=10),
            ),
        ]
    pi = PiContext(session_file=directory / "pyd.jsonl", context_window=10**9)
    await pi.process(list(messages))
    times: list[float] = []
    probe = _Probe()
    task = asyncio.create_task(probe.run())
    await asyncio.sleep(0.01)
    for turn in range(calls):
        messages.append(ModelRequest(parts=[UserPromptPart(f"more {turn}")]))
        start = time.perf_counter()
        await pi.process(list(messages))
        times.append(time.perf_counter() - start)
        messages.append(
            ModelResponse(
                parts=[TextPart(f"ok {turn}")],
                usage=RequestUsage(input_tokens=100, output_tokens=10),
            )
        )
        await asyncio.sleep(0)
    probe.stop()
    await task
    return {"process": _stats(times), "loop_held_ms": probe.worst * 1000}


async def _langchain(directory: Path, count: int, calls: int) -> dict[str, Any]:
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

    from pi_context.integrations.langchain import PiSummarizationMiddleware

    messages: list[BaseMessage] = []
    for turn in range(count // 4):
        call = f"call_{turn}"
        messages += [
            HumanMessage(f"please read file_{turn}.py", id=f"h{turn}"),
            AIMessage(
                "",
                tool_calls=[{"name": "read_file", "args": {}, "id": call, "type": "tool_call"}],
                id=f"a{turn}",
            ),
            ToolMessage("x = 1\n" * 40, tool_call_id=call, id=f"t{turn}"),
            AIMessage(f"done {turn}", id=f"d{turn}", usage_metadata=_USAGE),
        ]
    mw = PiSummarizationMiddleware(session_file=directory / "lc.jsonl", context_window=10**9)
    await mw.abefore_model({"messages": list(messages)}, None)
    times: list[float] = []
    probe = _Probe()
    task = asyncio.create_task(probe.run())
    await asyncio.sleep(0.01)
    for turn in range(calls):
        messages.append(HumanMessage(f"more {turn}", id=f"m{turn}"))
        start = time.perf_counter()
        await mw.abefore_model({"messages": list(messages)}, None)
        times.append(time.perf_counter() - start)
        messages.append(AIMessage(f"ok {turn}", id=f"o{turn}", usage_metadata=_USAGE))
        await asyncio.sleep(0)
    probe.stop()
    await task
    return {"abefore_model": _stats(times), "loop_held_ms": probe.worst * 1000}


_USAGE: Any = {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110}


def _measure(count: int, calls: int, requests: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        return {
            "openai-agents": asyncio.run(_openai_agents(directory, count, calls)),
            "pydantic-ai": asyncio.run(_pydantic_ai(directory, count, requests)),
            "langchain": asyncio.run(_langchain(directory, count, requests)),
        }


def _run_in(checkout: Path, count: int, calls: int, requests: int) -> dict[str, Any]:
    """This script's measurements in another checkout (its venv, its source)."""
    env = dict(os.environ, PYTHONPATH=str(checkout / "src"))
    done = subprocess.run(
        [
            str(checkout / ".venv" / "bin" / "python"),
            __file__,
            "--items",
            str(count),
            "--calls",
            str(calls),
            "--requests",
            str(requests),
            "--json",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        check=True,
        cwd=str(checkout),
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _rows(before: dict[str, Any] | None, after: dict[str, Any]) -> list[str]:
    rows = []
    for adapter, figures in after.items():
        for hook, value in figures.items():
            old = before[adapter][hook] if before is not None else None
            if isinstance(value, dict):
                for stat in ("mean_ms", "max_ms"):
                    was = f"{old[stat]:.2f}" if old is not None else "-"
                    rows.append(
                        f"| {adapter} | `{hook}` {stat[:-3]} ms | {was} | {value[stat]:.2f} |"
                    )
            else:
                was = f"{old:.2f}" if old is not None else "-"
                rows.append(f"| {adapter} | longest loop stall ms | {was} | {value:.2f} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=50, help="add_items calls")
    parser.add_argument("--requests", type=int, default=5, help="request hooks per adapter")
    parser.add_argument("--baseline", type=Path, help="a checkout with .venv to compare with")
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    args = parser.parse_args()
    before = (
        _run_in(args.baseline, args.items, args.calls, args.requests) if args.baseline else None
    )
    after = _measure(args.items, args.calls, args.requests)
    if args.json:
        print(json.dumps(after))
        return
    print(
        f"{args.items} items of history, {args.calls} add_items calls, {args.requests} requests"
        " per request hook, compaction off\n"
    )
    print("| adapter | figure | baseline | this checkout |")
    print("|---|---|---|---|")
    print("\n".join(_rows(before, after)))


if __name__ == "__main__":
    main()
