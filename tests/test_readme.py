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


def test_the_library_quickstart_runs_twice_in_one_directory(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    quickstart = README.split("## Quickstart: the library", 1)[1]
    code = _blocks("python")[0]
    assert code in quickstart
    env = {**os.environ, "HOME": str(tmp_path), "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    outputs = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert "assistant: Hello!" in outputs[1]
    assert "4 requests so far" in outputs[1]  # the second run continued the same file
