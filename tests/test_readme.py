"""The README's examples run as written."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def _offline_commands() -> list[str]:
    """``pictx`` inspection commands of the README that need no model and no placeholder."""
    commands = []
    for block in _blocks("sh"):
        for line in block.splitlines():
            command = line.split("#", 1)[0].strip()
            offline = command.startswith(("pictx prompt", "pictx skills"))
            if offline or (command.startswith("pictx ") and "examples/" in command):
                commands.append(command)
    return commands


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def test_readme_opens_with_the_two_commands() -> None:
    first = _blocks("sh")[0].splitlines()
    commands = [line for line in first if line and not line.startswith("#")]
    assert commands[0].endswith("pip install -e '.[local]' && .venv/bin/pictx")
    assert commands[1].endswith("pip install -e '.[dev,local]' && scripts/check")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1] in ci


def test_the_offline_commands_exist() -> None:
    assert len(_offline_commands()) >= 5


@pytest.mark.parametrize("command", _offline_commands())
def test_offline_command_runs(command: str, workdir: Path) -> None:
    pictx = Path(sys.executable).with_name("pictx")
    args = [str(pictx), *command.split()[1:]]
    done = subprocess.run(args, cwd=workdir, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_python_example_runs(index: int, workdir: Path) -> None:
    code = _blocks("python")[index]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=workdir, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
