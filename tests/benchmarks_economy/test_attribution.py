"""Where the money goes: each request's excess over the all-cached floor, by cause."""

from __future__ import annotations

from typing import Any

import pytest
from benchmarks.economy.attribution import attribute
from benchmarks.economy.pricing import ANTHROPIC_PRICES
from benchmarks.economy.project import Project
from benchmarks.economy.wire import thinking_config
from benchmarks.economy.workload import Event, Prompt, Workload


def _workload(*prompts: Prompt) -> Workload:
    return Workload(1, Project({}, {}, []), list(prompts))


def _prompt(index: int, gap: float = 30.0, events: list[Event] | None = None) -> Prompt:
    return Prompt(index, f"prompt {index}", [], "done", gap, events or [])


def _record(
    index: int, *, input: int, write: int, thinking: str = "", kind: str = "turn"
) -> dict[str, Any]:
    read = input - write
    cost = ANTHROPIC_PRICES.cost(uncached=0, cache_read=read, cache_write=write, output=10)
    return {
        "index": index,
        "kind": kind,
        "input": input,
        "cache_read": read,
        "cache_write": write,
        "uncached": 0,
        "output": 10,
        "cost": cost,
        "thinking": thinking,
    }


def _excess(write: int) -> float:
    """What ``write`` tokens written instead of read cost above the floor."""
    written = ANTHROPIC_PRICES.cost(uncached=0, cache_read=0, cache_write=write, output=0)
    read = ANTHROPIC_PRICES.cost(uncached=0, cache_read=write, cache_write=0, output=0)
    return written - read


def test_a_budget_change_the_agent_made_is_its_own_cause() -> None:
    medium = '{"budget_tokens":7168,"type":"enabled"}'
    cut = '{"budget_tokens":1024,"type":"enabled"}'
    run = {
        "prompt_starts": [0, 2],
        "records": [
            _record(0, input=2000, write=2000, thinking=medium),
            _record(1, input=30_000, write=28_000, thinking=medium),
            # the same prompt, the window cut the budget: the whole conversation rewritten
            _record(2, input=31_000, write=31_000, thinking=cut),
            _record(3, input=31_500, write=500, thinking=cut),
        ],
    }
    causes = attribute(run, _workload(_prompt(0), _prompt(1)), ANTHROPIC_PRICES)
    assert causes["thinking config changed"] == pytest.approx(_excess(31_000))
    assert causes["new content"] == pytest.approx(_excess(2000) + _excess(28_000) + _excess(500))


def test_a_thinking_event_is_the_users_change_not_the_agents() -> None:
    run = {
        "prompt_starts": [0, 1],
        "records": [
            _record(0, input=5000, write=5000, thinking='{"budget_tokens":7168}'),
            _record(1, input=5200, write=5200, thinking='{"budget_tokens":16384}'),
        ],
    }
    later = _prompt(1, events=[Event("thinking", "high")])
    causes = attribute(run, _workload(_prompt(0), later), ANTHROPIC_PRICES)
    assert causes["event: thinking"] == pytest.approx(_excess(5200))
    assert "thinking config changed" not in causes


def test_thinking_config_is_read_from_either_api() -> None:
    assert thinking_config({"thinking": {"type": "enabled", "budget_tokens": 1024}}) == (
        '{"type":"enabled","budget_tokens":1024}'
    )
    assert thinking_config({"reasoning_effort": "low"}) == '"low"'
    assert thinking_config({"model": "m"}) == ""
