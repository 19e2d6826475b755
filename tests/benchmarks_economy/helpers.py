"""The economy driver run against a fake RPC agent, shared by the driver and clock tests."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from benchmarks.economy.contenders import Contender
from benchmarks.economy.drive import drive
from benchmarks.economy.server import Simulator, SimulatorServer
from benchmarks.economy.tokens import whitespace_tokenizer
from benchmarks.economy.workload import Workload, generate_workload

FAKE = Path(__file__).with_name("fake_rpc_agent.py")
"""A stand-in agent speaking the RPC protocol (``FAKE_*`` variables make it crash or hang)."""
WORKLOAD = generate_workload(2, prompts=24)
"""A small workload (24 prompts)."""


def drive_fake_agent(
    tmp_path: Path, workload: Workload = WORKLOAD, **env: str
) -> tuple[Any, list[Any]]:
    """Drive :data:`FAKE` (``env`` added to its environment) through ``workload`` against a
    simulated provider: the drive's result and the fake agent's journal."""
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
