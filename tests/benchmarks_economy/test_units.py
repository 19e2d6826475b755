"""Saved units: reused only while complete and with unchanged inputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.economy.contenders import Contender
from benchmarks.economy.units import Unit, code_hash


def _unit(**changes: Any) -> Unit:
    contender = Contender("pictx default", ["pictx"], version=changes.pop("version", "v1"))
    fields: dict[str, Any] = {"api": "openai", "seed": 2, "prompts": 160, "window": 48_000,
                              "driver": "rpc"}  # fmt: skip
    return Unit(contender, **(fields | changes))


RUN: dict[str, Any] = {"contender": "pictx default", "records": [], "failures": []}


def test_a_saved_unit_is_reused_while_its_inputs_are_unchanged(tmp_path: Path) -> None:
    _unit().save(tmp_path, RUN)
    assert _unit().load(tmp_path) == RUN
    assert _unit(version="v2").load(tmp_path) is None  # the contender's code changed
    assert _unit(window=64_000).load(tmp_path) is None
    assert _unit(driver="print").load(tmp_path) is None
    assert _unit(seed=3).load(tmp_path) is None  # another unit, not saved


def test_a_unit_with_failed_prompts_or_a_damaged_file_is_run_again(tmp_path: Path) -> None:
    _unit().save(tmp_path, RUN | {"failures": ["prompt 4: agent exited with 1"]})
    assert _unit().load(tmp_path) is None
    _unit().path(tmp_path).write_text('{"inputs": ')
    assert _unit().load(tmp_path) is None


def test_code_hash_follows_the_contents(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text("x = 1\n")
    before = code_hash([package])
    assert code_hash([package]) == before
    (package / "a.py").write_text("x = 2\n")
    assert code_hash([package]) != before
