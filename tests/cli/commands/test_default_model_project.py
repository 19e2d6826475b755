"""A trusted project's ``defaultProvider`` / ``defaultModel`` choose the startup model, as pi's
merged settings do (project over agent dir); an untrusted project's do not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[3] / "src"
KEYS = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}


def _startup_note(tmp_path: Path, *flags: str) -> str:
    agent = tmp_path / "agent"
    project = tmp_path / "project"
    (project / ".pi").mkdir(parents=True)
    agent.mkdir()
    (project / ".pi" / "settings.json").write_text(
        json.dumps({"defaultProvider": "openai", "defaultModel": "gpt-5-nano"})
    )
    (agent / "settings.json").write_text(json.dumps({"retry": {"enabled": False}}))
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env.update(
        KEYS,
        HOME=str(tmp_path),
        PI_CODING_AGENT_DIR=str(agent),
        PYTHONPATH=str(SRC),
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",  # nothing listens: the request fails at once
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from pi_context.cli.main import main; sys.exit(main())",
            *flags,
            "--no-session",
            "-p",
            "hi",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return next(line for line in done.stderr.splitlines() if line.startswith("pictx: model "))


@pytest.mark.parametrize(
    ("flag", "expected"),
    [
        ("-a", "pictx: model openai/gpt-5-nano (defaultProvider/defaultModel in settings.json)"),
        ("-na", "pictx: model anthropic/"),
    ],
)
def test_project_default_model_needs_trust(tmp_path: Path, flag: str, expected: str) -> None:
    assert _startup_note(tmp_path, flag).startswith(expected)
