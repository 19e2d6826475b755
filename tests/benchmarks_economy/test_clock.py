"""The agent under test lives the workload's pauses: the driver records them before each
prompt, and the launcher's clock moves the agent's wall clock forward by them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from benchmarks.economy.clock import install_clock, write_offset

from tests.benchmarks_economy.helpers import WORKLOAD, drive_fake_agent


def test_the_clock_is_shifted_by_the_recorded_pauses_and_restored(tmp_path: Path) -> None:
    path = tmp_path / "clock"
    write_offset(path, 3600.0)
    before = time.time()
    undo = install_clock(str(path))
    try:
        assert time.time() - before >= 3600
        assert time.time_ns() // 10**9 - int(before) >= 3600
        write_offset(path, 7200.5)
        assert time.time() - before >= 7200
    finally:
        undo()
    assert time.time() - before < 3600


def test_without_a_clock_file_nothing_changes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real = time.time_ns
    monkeypatch.delenv("SIM_CLOCK_FILE", raising=False)
    install_clock()()
    assert time.time_ns is real
    undo = install_clock(str(tmp_path / "absent"))
    try:
        assert abs(time.time() - real() / 1e9) < 60
    finally:
        undo()


def test_the_driver_records_the_pauses_before_each_prompt(tmp_path: Path) -> None:
    result, journal = drive_fake_agent(tmp_path)
    assert result.failures == []
    paused = [r["paused_ns"] for r in journal if "paused_ns" in r]
    expected, total = [], 0.0
    for prompt in WORKLOAD.prompts:
        total += prompt.gap
        expected.append(int(total * 1e9))
    assert paused == expected
