"""The drivers' protocol against a stand-in agent: restarts only where a user must restart,
the session commands elsewhere, and failures reported without stopping the run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from benchmarks.economy import drive as drive_module
from benchmarks.economy.contenders import Contender
from benchmarks.economy.drive import drive
from benchmarks.economy.server import Simulator, SimulatorServer
from benchmarks.economy.tokens import whitespace_tokenizer
from benchmarks.economy.workload import Workload, generate_workload, ticket

FAKE = Path(__file__).with_name("fake_rpc_agent.py")
WORKLOAD = generate_workload(2, prompts=24)
RESTARTING = {"agents_md", "skill", "tools"}


def _run(tmp_path: Path, workload: Workload = WORKLOAD, **env: str) -> tuple[Any, list[Any]]:
    journal = tmp_path / "journal.jsonl"
    contender = Contender(
        "fake",
        [sys.executable, str(FAKE)],
        env={"FAKE_JOURNAL": str(journal), "FAKE_CHILD": str(tmp_path / "child.pid"), **env},
    )
    sim = Simulator("openai", workload, whitespace_tokenizer(), 48_000)
    with SimulatorServer(sim) as server:
        result = drive(contender, workload, server, tmp_path / "run", window=48_000)
    return result, [json.loads(line) for line in journal.read_text().splitlines()]


def _prompt_index(record: dict[str, Any]) -> int:
    return next(p.index for p in WORKLOAD.prompts if p.text == record["message"])


def test_rpc_restarts_only_for_changes_a_running_agent_cannot_see(tmp_path: Path) -> None:
    result, journal = _run(tmp_path)
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
    result, journal = _run(tmp_path, FAKE_CRASH=crash)
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
    result, journal = _run(tmp_path, FAKE_HANG=ticket(5))
    assert [f.split(":")[0] for f in result.failures] == ["prompt 5"]
    assert "hung" in result.failures[0]
    assert len([r for r in journal if r.get("type") == "prompt"]) == len(WORKLOAD.prompts)
