"""Signals and a closed stdout during ``pictx -p`` / ``--mode json``: documented exit codes,
no traceback, and the session file keeps the aborted answer.

The general cases run a slow scripted model in a real subprocess; one case runs the embedded
model (``local_model``), where freeing llama.cpp under a running generation used to crash.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pi_context.providers.local_discovery import local_available
from tests.cli.helpers import sessions_of

Replies = Callable[[list[Any]], str]


def _start(project_as_cwd: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "pi_context.cli.main", *args],
        cwd=project_as_cwd,
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_user_message(proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        if '"message_end"' in line and '"role":"user"' in line:
            return
    raise AssertionError("the run ended before the user message was stored")


def _last_stop_reason(project_as_cwd: Path) -> str:
    (path,) = sessions_of(project_as_cwd.parent / "agent", project_as_cwd)
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    messages = [e["message"] for e in entries if e.get("type") == "message"]
    return str(messages[-1].get("stopReason", messages[-1]["role"]))


def _prompt_stored(project_as_cwd: Path) -> bool:
    files = sessions_of(project_as_cwd.parent / "agent", project_as_cwd)
    return bool(files) and '"role":"user"' in files[0].read_text()


@pytest.mark.parametrize(("signo", "code"), [(signal.SIGINT, 130), (signal.SIGHUP, 129)])
def test_a_signal_during_a_json_run_exits_with_its_code_and_keeps_the_session(
    project_as_cwd: Path, replies: Replies, signo: int, code: int
) -> None:
    spec = replies([{"text": "too late", "delay": 600}])
    with _start(project_as_cwd, "--mode", "json", "--model", spec, "wait") as proc:
        _wait_for_user_message(proc)
        proc.send_signal(signo)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == code
    assert '"type":"agent_settled","aborted":true' in out
    assert "Traceback" not in err
    assert _last_stop_reason(project_as_cwd) == "aborted"


def test_a_signal_during_print_mode_exits_quietly(project_as_cwd: Path, replies: Replies) -> None:
    spec = replies([{"text": "too late", "delay": 600}])
    with _start(project_as_cwd, "-p", "--model", spec, "wait") as proc:
        # print mode shows nothing before the answer: wait for the file to hold the prompt
        while proc.poll() is None and not _prompt_stored(project_as_cwd):
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143
    assert out == ""
    assert "Traceback" not in err
    assert _last_stop_reason(project_as_cwd) == "aborted"


def test_a_closed_stdout_ends_a_json_run_quietly(project_as_cwd: Path, replies: Replies) -> None:
    # an answer larger than a pipe's buffer: pictx is still writing it when the reader goes
    # away, whatever the timing, so the write meets the closed pipe
    spec = replies(["x" * 300_000])
    with _start(project_as_cwd, "--mode", "json", "--model", spec, "wait") as proc:
        _wait_for_user_message(proc)
        assert proc.stdout is not None
        proc.stdout.close()  # as `| head -3` does once it has its lines
        assert proc.stderr is not None
        err = proc.stderr.read()
        code = proc.wait(timeout=60)
    assert code == 141
    assert err == ""
    (path,) = sessions_of(project_as_cwd.parent / "agent", project_as_cwd)
    entries = [json.loads(line) for line in path.read_text().splitlines()]  # intact
    assert entries[-1]["message"]["role"] == "assistant"


@pytest.mark.local_model
@pytest.mark.slow
@pytest.mark.skipif(not local_available()[0], reason="local extra not installed")
@pytest.mark.parametrize("signo", [signal.SIGTERM])
def test_a_signal_while_the_embedded_model_generates_does_not_crash(
    project_as_cwd: Path, signo: int
) -> None:
    args = ("--mode", "json", "--model", "local/smollm2-135m-instruct")
    with _start(project_as_cwd, *args, "Write a long story about the sea and old ships.") as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            if '"text_delta"' in line:
                break
        proc.send_signal(signo)
        _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signo, err
    assert "Traceback" not in err
    assert _last_stop_reason(project_as_cwd) == "aborted"


def test_ctrl_c_before_the_command_runs_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Ctrl-C while the command line is still being set up (imports, the typo check)
    from pi_context.cli import entry_help
    from pi_context.cli.main import main

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(entry_help, "mistyped_command", interrupted)
    assert main(["session", "info", "x.jsonl"]) == 1
    captured = capsys.readouterr()
    assert captured.err == "pictx: error: aborted\n"
    assert captured.out == ""
