"""Where the money goes: each request's cost above the all-cached floor, by cause.

The floor of a request is its input billed entirely at the cache-read price plus its output;
everything above it is cache writes and uncached input. That excess (and the whole cost of
summary requests) is attributed to one cause:

``summary``
    a summarization request (compaction or branch summary).
``after compaction``
    the first request after the context shrank by more than a third (a compaction rewrote
    the prefix, so it is written again).
``event: <kinds>``
    the first request of a prompt that follows a workload event (AGENTS.md edit, skill,
    tools, thinking, side session, resume).
``thinking config changed``
    a request whose thinking configuration (Anthropic's ``thinking`` budget, OpenAI's
    ``reasoning_effort``) differs from the previous request's without a workload event: the
    agent changed it by itself (for example a budget cut near a full window), and on Anthropic
    that voids the cached messages.
``pause``
    the first request of a prompt after a pause longer than the 5-minute cache lifetime.
``new content``
    everything else: tool results and answers appended since the previous request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmarks.economy.pricing import Prices
from benchmarks.economy.workload import Workload

__all__ = ["attribute"]


def attribute(run: Mapping[str, Any], workload: Workload, prices: Prices) -> dict[str, float]:
    """Dollars per cause for one run (see the module docstring)."""
    records = run["records"]
    first_of_prompt = set(run["prompt_starts"])
    prompt_of: dict[int, int] = {}
    starts = run["prompt_starts"]
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(records)
        for i in range(start, end):
            prompt_of[i] = number
    out: dict[str, float] = {}
    previous_input = 0
    previous_thinking: str | None = None
    for i, record in enumerate(records):
        if record["kind"] == "overflow":
            out["over window"] = out.get("over window", 0.0)
            continue
        floor = prices.cost(
            uncached=0, cache_read=record["input"], cache_write=0, output=record["output"]
        )
        excess = record["cost"] - floor
        if record["kind"] == "summary":
            cause, amount = "summary", record["cost"]
        else:
            prompt = workload.prompt(prompt_of.get(i, -1))
            thinking = record.get("thinking", "")
            amount = excess
            if previous_input and record["input"] < previous_input * 2 / 3:
                cause = "after compaction"
            elif i in first_of_prompt and prompt is not None and prompt.events:
                cause = "event: " + "+".join(e.kind for e in prompt.events)
            elif previous_thinking is not None and thinking != previous_thinking:
                cause = "thinking config changed"
            elif i in first_of_prompt and prompt is not None and prompt.gap > 300:
                cause = "pause"
            else:
                cause = "new content"
            previous_input = record["input"]
            previous_thinking = thinking
        out[cause] = out.get(cause, 0.0) + amount
    return out
