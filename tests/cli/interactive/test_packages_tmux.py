"""A package pi installed, used in a real terminal (tmux): its prompt template is listed by
``/help`` with the package named and expands as typed, its skill runs with ``/skill:``, and its
TypeScript extension and a package that was never installed are each reported once."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from tests.cli.interactive.tmux_screen import DEADLINE, NEEDS_TMUX, tmux_pictx

pytestmark = NEEDS_TMUX


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _user_texts(sessions: Path) -> list[str]:
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end and not list(sessions.rglob("*.jsonl")):
        time.sleep(0.1)
    (path,) = sessions.rglob("*.jsonl")
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    messages: list[dict[str, Any]] = [e["message"] for e in entries if e.get("type") == "message"]
    return [m["content"][0]["text"] for m in messages if m["role"] == "user"]


def test_a_packaged_template_and_skill_work_in_the_terminal(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    root = agent / "npm" / "node_modules" / "@x" / "tools"
    _write(root / "package.json", json.dumps({"name": "@x/tools", "version": "1.0.0"}))
    _write(
        root / "prompts" / "audit.md",
        "---\ndescription: Audit one module\nargument-hint: <module>\n---\nAudit $1 for ${2:-bugs}.\n",
    )
    _write(
        root / "skills" / "tidy" / "SKILL.md",
        "---\nname: tidy\ndescription: Tidy the code\n---\nTIDY-SKILL-BODY\n",
    )
    _write(root / "extensions" / "gate.ts", "export default function () {}\n")
    _write(agent / "settings.json", json.dumps({"packages": ["npm:@x/tools", "npm:not-there"]}))
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["AUDIT-ANSWER", "TIDY-ANSWER"]))
    sessions = tmp_path / "sessions"
    args = ["--session-dir", str(sessions), "--model", f"scripted:{script}"]
    with tmux_pictx(tmp_path, "pkg", args, agent_dir=agent, size=(160, 50)) as screen:
        shown = screen.wait_for(lambda s: "›" in s, "the prompt")
        assert shown.count('package "npm:@x/tools": its extensions (gate.ts)') == 1
        assert shown.count('run "pi install npm:not-there"') == 1
        screen.type_line("/help")
        screen.wait_for(lambda s: "[u:npm:@x/tools] Audit one module" in s, "the template in /help")
        screen.type_line("/audit parser.py")
        screen.wait_for(lambda s: "AUDIT-ANSWER" in s, "the answer to the template")
        screen.type_line("/skill:tidy now")
        screen.wait_for(lambda s: "TIDY-ANSWER" in s, "the answer to the skill")
        screen.type_line("/quit")
        texts = _user_texts(sessions)
    assert texts[0] == "Audit parser.py for bugs."
    skill_md = root / "skills" / "tidy" / "SKILL.md"
    assert texts[1] == (
        f'<skill name="tidy" location="{skill_md}">\n'
        f"References are relative to {skill_md.parent}.\n\nTIDY-SKILL-BODY\n</skill>\n\nnow"
    )
