"""The README opens with the two commands a newcomer needs (its blocks run: tests/test_docs.py)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}(?: [^\n]*)?\n(.*?)```", README, flags=re.DOTALL)


def test_readme_opens_with_the_two_commands() -> None:
    first = _blocks("sh")[0].splitlines()
    commands = [line for line in first if line and not line.startswith("#")]
    assert commands[0].endswith("pip install -e '.[local]' && .venv/bin/pictx")
    assert commands[1].endswith("pip install -e '.[dev,local]' && scripts/check")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1] in ci
