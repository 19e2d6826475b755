"""The summary over seeds: means, ratios to pi and the goals, from synthetic runs."""

from __future__ import annotations

from typing import Any

from benchmarks.economy.report import goals, mean_table, run_cost_table


def _run(name: str, cost: float, failures: int = 0) -> dict[str, Any]:
    record = {"kind": "turn", "input": 10, "cache_read": 0, "cache_write": 0, "uncached": 10,
              "output": 1, "cost": cost}  # fmt: skip
    return {
        "contender": name,
        "records": [record],
        "prompt_starts": [0],
        "failures": [f"prompt {i}: x" for i in range(failures)],
        "sessions": {"compactions": 0, "compactions_with_files": 0, "branch_summaries": 0},
        "wall_seconds": 60.0,
        "cpu_agent_seconds": 3.0,
        "cpu_driver_seconds": 1.0,
        "processes": 1,
    }


RESULTS = {
    ("openai", 1): [_run("pi 1.6.0", 10.0), _run("pictx default", 8.0), _run("pictx + x", 5.0)],
    ("openai", 2): [
        _run("pi 1.6.0", 20.0),
        _run("pictx default", 18.0),
        _run("pictx + x", 9.0),
        _run("pictx + y", 1.0) | {"prompt_starts": []},
    ],
    ("anthropic", 1): [_run("pi 1.6.0", 10.0), _run("pictx default", 8.0, failures=1)],
}


def test_mean_table_averages_seeds_and_compares_means() -> None:
    table = mean_table(RESULTS)
    assert "| pi 1.6.0 | $10.00 | $20.00 | $15.00 | 100% | 100%, 100% |" in table
    assert "| pictx default | $8.00 | $18.00 | $13.00 | 87% | 80%, 90% |" in table
    # a run with a failed prompt is left out of the means, and so is one cut short
    assert "| pictx default | $8.00 | $8.00 |" not in table
    assert "pictx + y" not in table


def test_goals_state_met_or_not_with_the_numbers() -> None:
    assert goals(RESULTS) == [
        "anthropic: default not measured (no complete run)",
        "openai: default 87% of pi over seeds 1, 2 (goal <= 85%): not met",
        "openai: best (pictx + x) 47% of pi over seeds 1, 2 (goal <= 60%): met",
    ]


def test_run_cost_table_sums_the_units_of_each_contender() -> None:
    table = run_cost_table(RESULTS)
    assert "| pi 1.6.0 | 3 | 3 | 3.0 min | 9 s | 3 s | 4.00 s |" in table
