"""A real pseudo-terminal (pexpect) running ``pictx`` with a scripted model, for the tests that
drive interactive mode as a user would. Importing it skips the importing module where pexpect is
not installed."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

pexpect = pytest.importorskip("pexpect")

PICTX = [sys.executable, "-m", "pi_context.cli.main"]
"""How a user's ``pictx`` runs (the console script calls the same ``main``)."""
PROMPT = "›"
TIMEOUT = 90
"""Seconds one expectation may wait: generous, it only runs out when something is wrong."""


class Terminal:
    """One ``pictx`` process in an 100x40 pseudo-terminal."""

    def __init__(
        self, tmp: Path, replies: Sequence[Any], *args: str, wait_prompt: bool = True
    ) -> None:
        self.tmp = tmp
        self.project = tmp / "proj"
        self.agent_dir = tmp / "agent"
        self.project.mkdir(exist_ok=True)
        (tmp / "home").mkdir(exist_ok=True)
        script = tmp / "replies.json"
        script.write_text(json.dumps(list(replies)), encoding="utf-8")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp / "home"),
            "PI_CODING_AGENT_DIR": str(self.agent_dir),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "PROMPT_TOOLKIT_NO_CPR": "1",
        }
        if "PYTHONPATH" in os.environ:
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        self.log = (tmp / "terminal.log").open("w", encoding="utf-8")
        self.child = pexpect.spawn(
            PICTX[0],
            [*PICTX[1:], "--model", f"scripted:{script}", *args],
            cwd=str(self.project),
            env=env,
            encoding="utf-8",
            dimensions=(40, 100),
            timeout=TIMEOUT,
        )
        self.child.logfile_read = self.log
        if wait_prompt:
            self.expect(PROMPT)

    def expect(self, pattern: str) -> None:
        self.child.expect_exact(pattern)

    def say(self, line: str) -> None:
        """Type a line and press Enter."""
        self.child.send(line)
        self.child.send("\r")

    def command(self, line: str, until: str) -> None:
        """Type a line, wait for ``until``, then for the next input prompt."""
        self.say(line)
        self.expect(until)
        self.expect(PROMPT)

    def entries(self) -> list[dict[str, Any]]:
        [file] = self.session_files()
        return [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]

    def session_files(self) -> list[Path]:
        return sorted((self.agent_dir / "sessions").glob("*/*.jsonl"))

    def quit(self) -> int:
        self.say("/quit")
        self.child.expect(pexpect.EOF)
        self.child.close()
        self.log.close()
        return int(self.child.exitstatus or 0)
