"""No control sequence from a file, a model or a tool reaches the terminal, and lone surrogates
neither crash a command nor get lost from the session file.

The hostile texts: OSC 52 (writes the clipboard), OSC 0 (retitles the window), a CSI clear
screen, and a lone surrogate ``\\ud800`` (valid JSON from a provider, not encodable as UTF-8).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pi_context.cli.main import cli
from tests.cli.helpers import PictxInProcess, sessions_of

pexpect = pytest.importorskip("pexpect")

Replies = Callable[[list[Any]], str]

OSC52 = "\x1b]52;c;SGVsbG8=\x07"
TITLE = "\x1b]0;PWNED\x07"
CLEAR = "\x1b[2J"
ESCAPES = ("\x1b]52", "\x1b]0;", "\x1b[2J")


def _hostile_session(path: Path) -> Path:
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00Z"}
    header["cwd"] = "/tmp/x"
    entries: list[dict[str, Any]] = [
        header,
        {"type": "session_info", "id": "n1", "parentId": None, "name": f"name{TITLE}"},
        {
            "type": "message",
            "id": "u1",
            "parentId": "n1",
            "message": {"role": "user", "content": f"hi{CLEAR}", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": "u1",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"look \ud800 {OSC52}"},
                    {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "f"}},
                ],
                "provider": "p",
                "model": "m",
                "stopReason": "toolUse",
                "timestamp": 2,
            },
        },
        {
            "type": "message",
            "id": "t1",
            "parentId": "a1",
            "message": {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "read",
                "content": [{"type": "text", "text": f"file says {OSC52}"}],
                "isError": False,
                "timestamp": 3,
            },
        },
        {"type": "label", "id": "l1", "parentId": "t1", "targetId": "a1", "label": f"L{TITLE}"},
    ]
    lines = [json.dumps(e) for e in entries]  # ASCII JSON: the surrogate stays an escape
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _assert_inert(text: str) -> None:
    for sequence in ESCAPES:
        assert sequence not in text
    assert "\x07" not in text


@pytest.mark.parametrize("command", ["info", "tree", "context"])
def test_session_commands_show_hostile_text_inert(tmp_path: Path, command: str) -> None:
    file = _hostile_session(tmp_path / "s.jsonl")
    before = file.read_bytes()
    code, out, err = _run("session", command, str(file))
    assert code == 0, err
    _assert_inert(out + err)
    assert file.read_bytes() == before
    if command != "info":
        assert "\ufffd" in out  # the surrogate is shown, as U+FFFD
    if command == "tree":
        assert "␛]0;PWNED␇" in out  # the label, visibly
    if command == "context":
        assert "␛]52;c;SGVsbG8=␇" in out


@pytest.mark.parametrize("command", ["info", "context"])
def test_session_json_escapes_controls_and_keeps_values(tmp_path: Path, command: str) -> None:
    file = _hostile_session(tmp_path / "s.jsonl")
    code, out, _ = _run("session", command, str(file), "--json")
    assert code == 0
    _assert_inert(out)
    data = json.loads(out)
    if command == "info":
        assert data["name"] == f"name{TITLE}"
        assert data["labels"] == {"a1": f"L{TITLE}"}
    else:
        texts = [m["message"]["content"] for m in data["messages"]]
        assert [{"type": "text", "text": f"look \ud800 {OSC52}"}] == [
            b for b in texts[1] if b["type"] == "text"
        ]


def test_print_mode_with_a_lone_surrogate_answer(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    run = pictx_in_process("-p", "--model", replies([f"done \ud800 {OSC52}"]), "hi")
    assert run.code == 0, run.err
    # stdout is a pipe here: the answer is data, kept except the unencodable surrogate
    assert run.out == f"done \ufffd {OSC52}\n"
    [file] = sessions_of(project_as_cwd.parent / "agent", project_as_cwd)
    raw = file.read_bytes()
    assert b"done \\ud800 \\u001b]52;c;SGVsbG8=\\u0007" in raw  # stored unchanged
    code, out, err = _run("session", "context", str(file))
    assert code == 0, err
    _assert_inert(out)


def test_json_mode_escapes_controls(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    run = pictx_in_process("--mode", "json", "--model", replies([f"x\x9d0;t\x9c {OSC52}"]), "hi")
    assert run.code == 0
    assert not any(c in run.out for c in "\x1b\x07\x9d\x9c")
    ends = [json.loads(line) for line in run.out.splitlines() if '"message_end"' in line]
    assert ends[-1]["message"]["content"][0]["text"] == f"x\x9d0;t\x9c {OSC52}"


# -- in a real terminal --------------------------------------------------------------------


def _spawn(tmp_path: Path, replies: list[Any], *args: str) -> Any:
    project_as_cwd = tmp_path / "proj"
    project_as_cwd.mkdir(exist_ok=True)
    (tmp_path / "home").mkdir(exist_ok=True)
    (project_as_cwd / "notes.txt").write_text(f"line one\n{OSC52}copied{TITLE}{CLEAR}\n", "utf-8")
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(replies), encoding="utf-8")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "PI_CODING_AGENT_DIR": str(tmp_path / "agent"),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "PROMPT_TOOLKIT_NO_CPR": "1",
    }
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    child = pexpect.spawn(
        sys.executable,
        ["-m", "pi_context.cli.main", "--model", f"scripted:{script}", *args],
        cwd=str(project_as_cwd),
        env=env,
        encoding="utf-8",
        codec_errors="replace",
        dimensions=(40, 100),
        timeout=90,
    )
    child.logfile_read = (tmp_path / "terminal.log").open("w", encoding="utf-8")
    return child


REPLIES: list[Any] = [
    {"text": "Reading it.", "toolCalls": [{"name": "read", "arguments": {"path": "notes.txt"}}]},
    f"It says {OSC52} and \ud800 (done).",
]


def test_interactive_never_lets_a_file_or_the_model_write_the_clipboard(tmp_path: Path) -> None:
    child = _spawn(tmp_path, REPLIES, "-n", f"proj{TITLE}")
    try:
        child.expect_exact("›")
        child.send("read notes.txt\r")
        child.expect_exact("(done).")
        child.expect_exact("›")
        child.send("/name\r")
        child.expect_exact("Session name:")
        child.expect_exact("›")
        child.send("/quit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
        child.logfile_read.close()
    shown = (tmp_path / "terminal.log").read_text("utf-8")
    _assert_inert(shown)
    # the tool output and the model's text, visibly (rich itself drops the BEL)
    assert "␛]52;c;SGVsbG8=copied" in shown
    assert "It says ␛]52;c;SGVsbG8= and \ufffd (done)." in shown
    assert "Session name: proj␛]0;PWNED" in shown
    assert "\ufffd" in shown
    [file] = sorted((tmp_path / "agent" / "sessions").glob("*/*.jsonl"))
    assert b"It says \\u001b]52;c;SGVsbG8=\\u0007 and \\ud800 (done)." in file.read_bytes()


def test_print_mode_on_a_terminal_is_terminal_safe(tmp_path: Path) -> None:
    child = _spawn(tmp_path, REPLIES, "-p", "read notes.txt")
    try:
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
        child.logfile_read.close()
    assert child.exitstatus == 0
    shown = (tmp_path / "terminal.log").read_text("utf-8")
    _assert_inert(shown)
    assert "It says ␛]52;c;SGVsbG8=␇ and \ufffd (done)." in shown
