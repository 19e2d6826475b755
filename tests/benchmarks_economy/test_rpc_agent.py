"""The RPC client against a stand-in agent process: replies, failures, hangs, clean stops."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from benchmarks.economy.rpc_agent import AgentDied, AgentTimeout, CommandFailed, RpcAgent

FAKE = Path(__file__).with_name("fake_rpc_agent.py")


def _agent(tmp_path: Path, **env: str) -> RpcAgent:
    base = {
        "HOME": str(tmp_path),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "FAKE_JOURNAL": str(tmp_path / "journal.jsonl"),
        "FAKE_CHILD": str(tmp_path / "child.pid"),
    }
    return RpcAgent([sys.executable, str(FAKE), "--mode", "rpc"], cwd=tmp_path, env=base | env)


def _eventually(condition: Callable[[], bool], limit: float = 60.0) -> bool:
    """Whether ``condition`` holds within ``limit`` seconds (polled; the limit only bounds a
    failure, it is no speed requirement)."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); it is dead for our purpose only once reaped elsewhere
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(")")[-1].split()[0] != "Z"


def test_prompt_waits_for_the_settled_run_and_commands_return_their_data(tmp_path: Path) -> None:
    with _agent(tmp_path) as agent:
        agent.prompt("hello", timeout=60)
        state = agent.call("get_state", 60)
        assert state["thinkingLevel"] == "medium"
        agent.call("set_thinking_level", 60, level="high")
        assert agent.call("get_state", 60)["thinkingLevel"] == "high"
    journal = [json.loads(line) for line in (tmp_path / "journal.jsonl").read_text().splitlines()]
    assert [r.get("type") for r in journal[1:]] == [
        "prompt", "get_state", "set_thinking_level", "get_state",
    ]  # fmt: skip
    assert agent.proc.returncode == 0  # end of input: an orderly exit


def test_a_refused_command_raises_with_the_agents_error(tmp_path: Path) -> None:
    with _agent(tmp_path) as agent, pytest.raises(CommandFailed, match="Unknown command: nope"):
        agent.call("nope", 60)


def test_a_dying_agent_is_reported_with_its_exit_code_and_stderr(tmp_path: Path) -> None:
    with _agent(tmp_path, FAKE_CRASH="boom") as agent:
        with pytest.raises(AgentDied, match="exited with 3"):
            agent.prompt("boom now", timeout=60)
        assert "out of cheese" in agent.stderr_tail()
        with pytest.raises(AgentDied):
            agent.call("get_state", 60)  # later waits fail at once, they do not hang


def test_a_hung_agent_times_out_and_stop_ends_it_and_its_children(tmp_path: Path) -> None:
    agent = _agent(tmp_path, FAKE_HANG="stuck")
    with pytest.raises(AgentTimeout):
        agent.prompt("stuck here", timeout=2)
    # However slow the machine, the hung agent gets to start its child: wait for its pid.
    child = tmp_path / "child.pid"
    assert _eventually(child.exists), "the fake agent never started its child"
    pid = int(child.read_text())
    agent.stop(grace=0.5)
    assert agent.proc.returncode is not None  # reaped: no zombie left behind
    # SIGKILL takes effect when the kernel next schedules the child: wait for it, boundedly.
    assert _eventually(lambda: not _alive(pid)), f"child {pid} outlived stop()"
