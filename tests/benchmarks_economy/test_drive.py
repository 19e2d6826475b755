"""The drivers' protocol against a stand-in agent: restarts only where a user must restart,
the session commands elsewhere, and failures reported without stopping the run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from benchmarks.economy import drive as drive_module
from benchmarks.economy.workload import ticket

from tests.benchmarks_economy.helpers import WORKLOAD, drive_fake_agent

RESTARTING = {"agents_md", "skill", "tools"}


def _prompt_index(record: dict[str, Any]) -> int:
    return next(p.index for p in WORKLOAD.prompts if p.text == record["message"])


def test_rpc_restarts_only_for_changes_a_running_agent_cannot_see(tmp_path: Path) -> None:
    result, journal = drive_fake_agent(tmp_path)
    assert result.failures == []
    kinds = {e.kind for p in WORKLOAD.prompts for e in p.events}
    assert {"agents_md", "skill", "tools", "thinking", "side_session", "resume_main"} <= kinds
    starts = [i for i, r in enumerate(journal) if "argv" in r]
    # which prompt each process was started for: the first prompt it received
    started_for = [
        _prompt_index(next(r for r in journal[i:] if r.get("type") == "prompt")) for i in starts
    ]
    expected = [0] + [
        p.index for p in WORKLOAD.prompts if p.index and {e.kind for e in p.events} & RESTARTING
    ]
    assert started_for == expected
    assert result.processes == len(expected)
    prompts = [r for r in journal if r.get("type") == "prompt"]
    assert len(prompts) == len(WORKLOAD.prompts)
    # every restart continues the session it left (the first process starts a new one)
    for i in starts[1:]:
        assert "--session" in journal[i]["argv"]
    # the side session and the return to the main one happen inside a running process
    side = next(p for p in WORKLOAD.prompts if any(e.kind == "side_session" for e in p.events))
    commands = [r.get("type") for r in journal]
    if not {e.kind for e in side.events} & RESTARTING:
        assert "new_session" in commands
    levels = [r["level"] for r in journal if r.get("type") == "set_thinking_level"]
    assert levels[:1] == ["high"]  # the user's change, as set_thinking_level or a flag


def test_rpc_reports_a_dead_agent_restarts_it_and_goes_on(tmp_path: Path) -> None:
    crash = ticket(7)
    result, journal = drive_fake_agent(tmp_path, FAKE_CRASH=crash)
    assert len(result.failures) == 1
    failure = result.failures[0]
    assert failure.startswith("prompt 7: agent exited with 3")
    assert "out of cheese" in failure
    prompts = [r for r in journal if r.get("type") == "prompt"]
    assert len(prompts) == len(WORKLOAD.prompts)  # every prompt was sent, the crashed one too
    assert len(result.prompt_starts) == len(WORKLOAD.prompts)
    restart = next(r for r in journal[journal.index(prompts[7]) :] if "argv" in r)
    assert "--session" in restart["argv"]


def test_rpc_reports_a_hung_agent_and_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(drive_module, "PROCESS_TIMEOUT", 3)
    result, journal = drive_fake_agent(tmp_path, FAKE_HANG=ticket(5))
    assert [f.split(":")[0] for f in result.failures] == ["prompt 5"]
    assert "hung" in result.failures[0]
    assert len([r for r in journal if r.get("type") == "prompt"]) == len(WORKLOAD.prompts)
