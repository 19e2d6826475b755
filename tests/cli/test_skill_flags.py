"""``--skill PATH`` and ``-ns/--no-skills`` (pi's resource flags): an explicit skill loads with
or without discovery, and ``-ns`` leaves the discovered and configured ones out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def _skill(folder: Path, name: str, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {name} things.\n---\n{body}\n"
    )


def _sent(tmp_path: Path, *args: str) -> str:
    agent = tmp_path / "agent"
    _skill(agent / "skills" / "auto", "auto", "discovered auto body")
    _skill(tmp_path / "mine" / "own", "own", "explicit own body")
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
