"""pictx against pi 1.6.0 in the same prompt-template scenario: for every prompt, the text
pictx sends is the text pi sent (recorded by :mod:`.record_pi_templates`), through the
loader and expansion, and once end to end through ``pictx -p``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pi_context.resources import ResourceLoader
from pi_context.resources.prompt_templates import expand_commands
from tests.resources.prompt_template_world import PROMPTS, build_world

RECORDED = Path(__file__).resolve().parents[1] / "data" / "prompt_templates" / "pi-1.6.0-print.json"
PI = json.loads(RECORDED.read_text(encoding="utf-8"))["sent"]


def test_the_recording_covers_the_scenario() -> None:
    assert [item["prompt"] for item in PI] == PROMPTS


@pytest.mark.parametrize("item", PI, ids=lambda item: repr(item["prompt"]))
def test_pictx_sends_what_pi_sent(tmp_path: Path, item: dict[str, str]) -> None:
    agent, project = build_world(tmp_path)
    res = ResourceLoader(project, agent_dir=agent, home=tmp_path).load()
    assert res.trusted
    assert expand_commands(item["prompt"], res.skills, res.prompt_templates) == item["sent"]


def test_print_mode_sends_the_expanded_text(tmp_path: Path) -> None:
    agent, project = build_world(tmp_path)
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["done"]))
    prompt, expected = PI[0]["prompt"], PI[0]["sent"]
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "HOME": str(tmp_path)}
    argv = [sys.executable, "-m", "pi_context", "--model", f"scripted:{replies}"]
    argv += ["--session-dir", str(tmp_path / "sessions"), "-p", prompt]
    done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    (session,) = (tmp_path / "sessions").rglob("*.jsonl")
    entries = [json.loads(line) for line in session.read_text(encoding="utf-8").splitlines()]
    users = [
        e["message"]
        for e in entries
        if e.get("type") == "message" and e["message"]["role"] == "user"
    ]
    assert [u["content"][0]["text"] for u in users] == [expected]
