"""What a newcomer sees on stderr: models.json problems, the model chosen and why, retries."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pi_context.cli.app import app
from tests.cli.helpers import PictxInProcess, sessions_of

Replies = Callable[[list[Any]], str]


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app, "_WARNED", set())


def _agent(project_as_cwd: Path) -> Path:
    agent = project_as_cwd.parent / "agent"
    agent.mkdir(exist_ok=True)
    return agent


def test_a_broken_models_json_is_named_with_line_and_column_where_a_model_is_not_found(
    project_as_cwd: Path, pictx_in_process: PictxInProcess
) -> None:
    broken = '{"providers": {"llamacpp": {"baseUrl": "http://127.0.0.1:9/v1",\n "models": [{"id": "s",}]}}}'
    (_agent(project_as_cwd) / "models.json").write_text(broken)
    run = pictx_in_process("--no-session", "-p", "--model", "llamacpp/s", "hi")
    assert run.code == 1
    lines = run.err.splitlines()
    assert lines[0].startswith("pictx: warning: ")
    assert "models.json" in lines[0]
    assert "line 2 column" in lines[0]
    assert lines[1].startswith('pictx: error: Model "llamacpp/s" not found')
    assert "models.json was ignored" in lines[1]
    assert "line 2 column" in lines[1]


def test_a_broken_models_json_is_a_warning_at_every_start(
    project_as_cwd: Path, pictx_in_process: PictxInProcess
) -> None:
    (_agent(project_as_cwd) / "models.json").write_text("{nope")
    for _ in range(2):
        app._WARNED.clear()  # a new process each time
        run = pictx_in_process("--no-session", "-p")  # the startup model is chosen, then: no prompt
        assert run.code == 1
        assert run.err.startswith("pictx: warning: ")
        assert "models.json" in run.err
        assert run.err.count("pictx: warning: ") == 1


def test_a_custom_model_without_a_window_is_warned_and_the_choice_is_explained(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    models = {
        "providers": {
            "myserver": {
                "baseUrl": "http://127.0.0.1:9/v1",
                "api": "openai-completions",
                "apiKey": "x",
                "models": [{"id": "tiny"}],
            }
        }
    }
    (_agent(project_as_cwd) / "models.json").write_text(json.dumps(models))
    (_agent(project_as_cwd) / "settings.json").write_text(json.dumps({"retry": {"enabled": False}}))
    run = pictx_in_process("--no-session", "-p", "hi")
    assert 'myserver/tiny has no "contextWindow"; assuming 128000' in run.err
    assert "pictx: model myserver/tiny (the first model of models.json with a key" in run.err
    assert run.err.count("contextWindow") == 1  # once, not per read


def test_each_retry_is_announced_in_print_mode(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    (_agent(project_as_cwd) / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 1}}))
    spec = replies(
        [
            {"error": "server down", "errorKind": "transient"},
            {"error": "server down", "errorKind": "transient"},
            "fine now",
        ]
    )
    run = pictx_in_process("--no-session", "-p", "--model", spec, "hi")
    assert (run.code, run.out) == (0, "fine now\n")
    notes = [line for line in run.err.splitlines() if line.startswith("pictx: retrying")]
    assert len(notes) == 2
    assert "(attempt 1/" in notes[0]
    assert "(attempt 2/" in notes[1]
    assert notes[0].endswith("server down")


def test_continue_says_so_when_it_passes_over_an_unreadable_newest_session(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    assert pictx_in_process("-p", "--model", replies(["first"]), "one").code == 0
    (older,) = sessions_of(project_as_cwd.parent / "agent", project_as_cwd)
    broken = older.with_name("2099-01-01T00-00-00-000Z_broken.jsonl")
    broken.write_text("this is not a session\n")
    later = older.stat().st_mtime + 10
    os.utime(broken, (later, later))
    run = pictx_in_process("-c", "-p", "--model", replies(["second"]), "two")
    assert (run.code, run.out) == (0, "second\n")
    assert f"pictx: warning: {broken}: not a readable session file" in run.err
    assert f"continuing {older.name}" in run.err
    assert "two" in older.read_text()
