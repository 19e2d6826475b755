"""What the in-process ``pictx`` fixture (``pictx_in_process`` in conftest) returns, its type,
and where a run's session files are."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path


class InProcessRun:
    """One ``pictx`` run in this process (:func:`pictx_in_process`); ``out``/``err`` are what
    it wrote (``tests.helpers.ProcessRun`` is the subprocess counterpart)."""

    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err


PictxInProcess = Callable[..., InProcessRun]
"""The type of the ``pictx_in_process`` fixture: ``pictx_in_process(*args, stdin="")``."""


def sessions_of(agent: Path, cwd: Path) -> list[Path]:
    """The session files of ``cwd`` in agent dir ``agent``, where pi keeps them, sorted."""
    from pi_context.session_dirs import default_session_dir

    return sorted(default_session_dir(cwd, agent).glob("*.jsonl"))


def first_prompt_sent(tmp_path: Path, agent: Path, *args: str) -> str:
    """The text of the one user message a ``pictx`` subprocess run with ``args`` (a scripted
    model, agent dir ``agent``, ``tmp_path`` as HOME and working folder) recorded."""
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["done"]))
    sessions = tmp_path / f"sessions-{len(list(tmp_path.glob('sessions-*')))}"
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "HOME": str(tmp_path)}
    argv = [sys.executable, "-m", "pi_context", "--model", f"scripted:{replies}"]
    argv += ["--session-dir", str(sessions), *args]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    (session,) = sessions.rglob("*.jsonl")
    entries = [json.loads(line) for line in session.read_text(encoding="utf-8").splitlines()]
    (user,) = [
        e["message"]
        for e in entries
        if e.get("type") == "message" and e["message"]["role"] == "user"
    ]
    return str(user["content"][0]["text"])
