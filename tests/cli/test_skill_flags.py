"""``--skill PATH`` and ``-ns/--no-skills`` (pi's resource flags): an explicit skill loads with
or without discovery, and ``-ns`` leaves the discovered and configured ones out."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.helpers import first_prompt_sent


def _skill(folder: Path, name: str, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {name} things.\n---\n{body}\n"
    )


def _sent(tmp_path: Path, *args: str) -> str:
    agent = tmp_path / "agent"
    _skill(agent / "skills" / "auto", "auto", "discovered auto body")
    _skill(tmp_path / "mine" / "own", "own", "explicit own body")
    return first_prompt_sent(tmp_path, agent, *args)


@pytest.mark.parametrize(
    ("args", "expected", "absent"),
    [
        (["--skill", "mine/own", "-p", "/skill:own x"], "explicit own body", None),
        (["--skill", "mine/own", "-p", "/skill:auto x"], "discovered auto body", None),
        (["--skill", "mine", "-ns", "-p", "/skill:own x"], "explicit own body", None),
        (["-ns", "-p", "/skill:auto x"], "/skill:auto x", "discovered auto body"),
        (["--no-skills", "-p", "/skill:auto x"], "/skill:auto x", "discovered auto body"),
    ],
)
def test_the_flags_choose_the_skills(
    tmp_path: Path, args: list[str], expected: str, absent: str | None
) -> None:
    sent = _sent(tmp_path, *args)
    assert expected in sent
    if absent is not None:
        assert absent not in sent
