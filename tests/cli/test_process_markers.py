"""``pictx -v`` and the process markers every child of pictx inherits, as pi documents them.

pi's command line answers ``-v`` as ``--version``, and its CLI and RPC entry points set
``AI_AGENT`` and ``PI_CODING_AGENT=true`` so that commands the agent runs can tell they run
inside a coding agent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pi_context.cli.group import cli, wants_agent
from pi_context.cli.main import main

SRC = Path(__file__).resolve().parents[2] / "src"


def test_short_version_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-v"]) == 0
    assert capsys.readouterr().out.startswith("pictx, version ")
    result = CliRunner().invoke(cli, ["-v"])
    assert result.exit_code == 0
    assert result.output.startswith("pictx, version ")
    assert not wants_agent(["-v"], cli)


def test_tools_see_the_process_markers(tmp_path: Path) -> None:
    """A command the model runs through ``bash`` sees ``AI_AGENT`` and ``PI_CODING_AGENT``."""
    out = tmp_path / "markers.txt"
    replies = tmp_path / "replies.json"
    command = f'printf "%s/%s" "$AI_AGENT" "$PI_CODING_AGENT" > {out}'
    replies.write_text(
        json.dumps([{"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}, "ok"])
    )
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("AI_AGENT", "PI_CODING_AGENT") and not key.endswith("_API_KEY")
    }
    env.update(
        HOME=str(tmp_path),
        PI_CODING_AGENT_DIR=str(tmp_path / "agent"),
        PYTHONPATH=str(SRC),
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from pi_context.cli.main import main; sys.exit(main())",
            "--no-session",
            "--model",
            f"scripted:{replies}",
            "-p",
            "run it",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_text() == "pictx/true"
