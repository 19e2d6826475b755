"""``--prompt-template PATH`` and ``-np/--no-prompt-templates`` in print mode: an explicit
template loads with or without discovery, loses a name to a discovered one (pi's order), and
``-np`` leaves the discovered ones out. Every expected text is what pi 1.6.0 sent for the
same arguments in the same folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.helpers import first_prompt_sent


def _sent(tmp_path: Path, *args: str) -> str:
    agent = tmp_path / "agent"
    (agent / "prompts").mkdir(parents=True, exist_ok=True)
    (agent / "prompts" / "shared.md").write_text("discovered shared $1\n")
    (agent / "prompts" / "auto.md").write_text("discovered auto $1\n")
    (tmp_path / "mine").mkdir(exist_ok=True)
    (tmp_path / "mine" / "shared.md").write_text("explicit shared $1\n")
    (tmp_path / "mine" / "own.md").write_text("explicit own $1\n")
    return first_prompt_sent(tmp_path, agent, *args)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--prompt-template", "mine", "-p", "/own x"], "explicit own x\n"),
        (["--prompt-template", "mine", "-p", "/shared x"], "discovered shared x\n"),
        (["--prompt-template", "mine", "-np", "-p", "/shared x"], "explicit shared x\n"),
        (["--prompt-template", "mine/own.md", "-np", "-p", "/own y"], "explicit own y\n"),
        (["-np", "-p", "/auto x"], "/auto x"),
        (["-p", "/auto x"], "discovered auto x\n"),
    ],
)
def test_the_flags_choose_the_templates(tmp_path: Path, args: list[str], expected: str) -> None:
    assert _sent(tmp_path, *args) == expected
