"""Trust boundaries of ``pictx``, driven as a user would: a separate ``pictx``
process (or a pseudo-terminal) with a throwaway HOME and agent dir, real files in tmp dirs.

Each case checks that the value a hostile project (or a session recorded elsewhere) offered
was not used, that the user is told in one line, and that no file was changed or lost.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pi_context.session_dirs import default_session_dir, session_file_name
from tests.cli.interactive.pty_terminal import PROMPT, Terminal, pexpect
from tests.helpers import ProcessRun, pictx_process

TIMEOUT = 120
"""Seconds a ``pictx`` run may take before the test fails as hung (never reached normally)."""


class Place:
    """A project, a throwaway HOME and agent dir, and ``pictx`` runs in the project."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.project = tmp / "proj"
        self.agent = tmp / "agent"
        self.home = tmp / "home"
        for directory in (self.project, self.home):
            directory.mkdir(exist_ok=True)
        self._replies = 0

    def replies(self, items: Sequence[Any]) -> str:
        self._replies += 1
        path = self.tmp / f"replies{self._replies}.json"
        path.write_text(json.dumps(list(items)), encoding="utf-8")
        return f"scripted:{path}"

    def pictx_process(self, *args: str) -> ProcessRun:
        return pictx_process(
            *args,
            cwd=self.project,
            env={"HOME": str(self.home), "PI_CODING_AGENT_DIR": str(self.agent), "LANG": "C.UTF-8"},
        )

    def default_sessions(self) -> list[Path]:
        return sorted(default_session_dir(self.project, self.agent).glob("*.jsonl"))

    def settings(self, data: Any) -> Path:
        path = self.project / ".pi" / "settings.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
        return path


@pytest.fixture
def place(tmp_path: Path) -> Place:
    return Place(tmp_path)


def _session_file(directory: Path, cwd: Path, sid: str, text: str) -> Path:
    """A pi session recorded in ``cwd`` holding one user message ``text``."""
    stamp = "2026-01-05T10:00:00.000Z"
    header = {"type": "session", "version": 3, "id": sid, "timestamp": stamp, "cwd": str(cwd)}
    user = {
        "type": "message",
        "id": "00000001",
        "parentId": None,
        "timestamp": "2026-01-05T10:00:01.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1},
    }
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / session_file_name(stamp, sid)
    path.write_text(json.dumps(header) + "\n" + json.dumps(user) + "\n", encoding="utf-8")
    return path


def _entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _users(path: Path) -> list[str]:
    return [
        "".join(block.get("text", "") for block in e["message"]["content"])
        for e in _entries(path)
        if e.get("type") == "message" and e["message"].get("role") == "user"
    ]


def _tool_results(path: Path) -> list[dict[str, Any]]:
    return [
        e["message"]
        for e in _entries(path)
        if e.get("type") == "message" and e["message"].get("role") == "toolResult"
    ]


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


# -- sessionDir ----------------------------------------------------------------------------------


def test_an_untrusted_session_dir_is_not_used_and_a_planted_session_is_not_continued(
    place: Place,
) -> None:
    planted_dir = place.tmp / "planted"
    planted = _session_file(planted_dir, place.project, "planted", "PLANTED INSTRUCTION")
    before = planted.read_bytes()
    settings = place.settings({"sessionDir": str(planted_dir)})
    run = place.pictx_process("-p", "-c", "--model", place.replies(["answer"]), "hi")
    assert run.code == 0, run.stderr
    assert run.stdout == "answer\n"
    # the user is told, in one line naming the file
    warnings = [line for line in _lines(run.stderr) if str(settings) in line]
    assert len(warnings) == 1
    assert "not trusted" in warnings[0]
    assert "sessionDir" in warnings[0]
    # the conversation went where pictx keeps it, not where the repository said
    assert planted.read_bytes() == before
    assert sorted(planted_dir.iterdir()) == [planted]
    [written] = place.default_sessions()
    assert _users(written) == ["hi"]
    assert not (place.agent / "trust.json").exists()


def test_a_trusted_project_chooses_its_session_dir(place: Place) -> None:
    planted_dir = place.tmp / "kept"
    kept = _session_file(planted_dir, place.project, "kept", "earlier question")
    place.settings({"sessionDir": str(planted_dir)})
    assert place.pictx_process("trust").code == 0
    run = place.pictx_process("-p", "-c", "--model", place.replies(["answer"]), "hi")
    assert run.code == 0, run.stderr
    assert "not trusted" not in run.stderr
    assert _users(kept) == ["earlier question", "hi"]
    assert place.default_sessions() == []


# -- a broken settings file ----------------------------------------------------------------------


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '"a string"', "\x00\xff{"])
def test_a_broken_untrusted_settings_file_is_a_warning_and_pictx_starts(
    place: Place, text: str
) -> None:
    settings = place.settings(text)
    before = settings.read_bytes()
    run = place.pictx_process("-p", "--model", place.replies(["started"]), "hi")
    assert run.code == 0, run.stderr
    assert run.stdout == "started\n"
    assert len([line for line in _lines(run.stderr) if str(settings) in line]) == 1
    assert "internal error" not in run.stderr
    assert settings.read_bytes() == before
    [written] = place.default_sessions()
    assert _users(written) == ["hi"]


def test_a_broken_trusted_settings_file_is_still_an_error_naming_it(place: Place) -> None:
    settings = place.settings("{not json")
    assert place.pictx_process("trust").code == 0
    run = place.pictx_process("-p", "--model", place.replies(["never"]), "hi")
    assert run.code == 1
    [line] = _lines(run.stderr)
    assert str(settings) in line
    assert place.default_sessions() == []
    assert settings.read_text() == "{not json"


# -- every other key of an untrusted project file ------------------------------------------------


def test_no_key_of_an_untrusted_project_settings_file_is_used(place: Place) -> None:
    evil_skills = place.tmp / "evil-skills" / "evil"
    evil_skills.mkdir(parents=True)
    (evil_skills / "SKILL.md").write_text(
        "---\nname: evil\ndescription: EVIL-SKILL-DESCRIPTION\n---\nbody\n", encoding="utf-8"
    )
    place.settings(
        {
            "defaultTools": ["-read", "-bash", "-edit", "-write"],
            "skills": [str(evil_skills.parent)],
            "bash": {"defaultTimeoutSeconds": 0.5},
            "shellPath": str(place.tmp / "no-such-shell"),
            "shellCommandPrefix": "echo PREFIX-RAN",
            "compaction": {"reserveTokens": "not a number"},
            "retry": {"maxRetries": -1},
            "extensions": ["./evil.py"],
            "packages": ["evil-package"],
            "prompts": ["./evil-prompts"],
        }
    )
    command = {"name": "bash", "arguments": {"command": "sleep 1; echo FINISHED"}}
    replies = place.replies([{"toolCalls": [command]}, "done"])
    run = place.pictx_process("-p", "--model", replies, "run it")
    assert run.code == 0, run.stderr
    assert run.stdout == "done\n"
    [written] = place.default_sessions()
    [result] = _tool_results(written)
    text = "".join(block.get("text", "") for block in result["content"])
    # bash was active (defaultTools ignored), ran in the default shell without the prefix and
    # with the default timeout (the project's 0.5 s would have killed it)
    assert result["isError"] is False
    assert text.strip() == "FINISHED"
    assert "EVIL-SKILL-DESCRIPTION" not in written.read_text(encoding="utf-8")


# -- bash.defaultTimeoutSeconds -----------------------------------------------------------------


def test_the_bash_timeout_setting_reaches_the_tool(place: Place) -> None:
    place.agent.mkdir()
    (place.agent / "settings.json").write_text('{"bash": {"defaultTimeoutSeconds": 1}}')
    command = {"name": "bash", "arguments": {"command": "sleep 60; echo NEVER"}}
    replies = place.replies([{"toolCalls": [command]}, "done"])
    run = place.pictx_process("-p", "--model", replies, "run it")
    assert run.code == 0, run.stderr
    [written] = place.default_sessions()
    [result] = _tool_results(written)
    text = "".join(block.get("text", "") for block in result["content"])
    assert result["isError"] is True
    assert "timed out after 1 seconds" in text
    assert "NEVER" not in text


def test_a_bad_bash_timeout_setting_names_the_file_and_key(place: Place) -> None:
    place.agent.mkdir()
    settings = place.agent / "settings.json"
    settings.write_text('{"bash": {"defaultTimeoutSeconds": "soon"}}')
    run = place.pictx_process("-p", "--model", place.replies(["never"]), "hi")
    assert run.code == 1
    [line] = _lines(run.stderr)
    assert str(settings) in line
    assert "bash.defaultTimeoutSeconds" in line


# -- --session from another directory ------------------------------------------------------------


def _elsewhere(place: Place) -> tuple[Path, Path]:
    """A directory with its own AGENTS.md, and a session recorded there (stored outside it)."""
    elsewhere = place.tmp / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "AGENTS.md").write_text("ELSEWHERE-RULES\n", encoding="utf-8")
    return elsewhere, _session_file(place.tmp / "sessions", elsewhere, "other", "old question")


def test_print_mode_refuses_a_session_of_another_directory_naming_the_flag(
    place: Place,
) -> None:
    elsewhere, session = _elsewhere(place)
    before = session.read_bytes()
    for mode in (["-p"], ["--mode", "json"]):
        run = place.pictx_process(
            *mode, "--session", str(session), "--model", place.replies(["x"]), "hi"
        )
        assert run.code == 1
        [line] = _lines(run.stderr)
        assert "--use-session-cwd" in line
        assert str(elsewhere) in line
        assert run.stdout == ""
        assert session.read_bytes() == before
    assert place.default_sessions() == []


def test_use_session_cwd_runs_the_session_where_it_was_recorded(place: Place) -> None:
    elsewhere, session = _elsewhere(place)
    command = {"name": "bash", "arguments": {"command": "pwd"}}
    replies = place.replies([{"toolCalls": [command]}, "done"])
    run = place.pictx_process(
        "-p", "--session", str(session), "--use-session-cwd", "--model", replies, "where?"
    )
    assert run.code == 0, run.stderr
    assert _users(session) == ["old question", "where?"]
    [result] = _tool_results(session)
    assert result["content"][0]["text"].strip() == os.path.realpath(elsewhere)
    assert "ELSEWHERE-RULES" in session.read_text(encoding="utf-8")


def test_a_session_of_this_directory_opens_without_asking(place: Place) -> None:
    session = _session_file(place.tmp / "sessions", place.project, "mine", "old question")
    run = place.pictx_process(
        "-p", "--session", str(session), "--model", place.replies(["ok"]), "more"
    )
    assert run.code == 0, run.stderr
    assert _users(session) == ["old question", "more"]


@pytest.mark.parametrize("answer", ["n\r", "\r", "\x03"], ids=["no", "enter", "ctrl-c"])
def test_interactive_mode_asks_before_running_in_another_directory(
    tmp_path: Path, answer: str
) -> None:
    place = Place(tmp_path)
    elsewhere, session = _elsewhere(place)
    before = session.read_bytes()
    term = Terminal(tmp_path, ["never"], "--session", str(session), wait_prompt=False)
    try:
        term.expect(str(elsewhere))
        term.expect("Run its tools in that directory")
        term.child.send(answer)
        term.expect("Session not opened")
        term.child.expect(pexpect.EOF)
    finally:
        term.child.close()
        term.log.close()
    assert term.child.exitstatus == 0
    assert session.read_bytes() == before
    assert term.session_files() == []


def test_interactive_yes_opens_the_session_in_its_directory(tmp_path: Path) -> None:
    place = Place(tmp_path)
    _, session = _elsewhere(place)
    term = Terminal(tmp_path, ["answered"], "--session", str(session), wait_prompt=False)
    term.expect("Run its tools in that directory")
    term.say("y")
    term.expect(PROMPT)
    term.command("new question", "answered")
    assert term.quit() == 0
    assert _users(session) == ["old question", "new question"]


# -- /reload and /trust --------------------------------------------------------------------------


def test_reload_never_trusts_files_the_model_wrote_and_trust_is_explicit(tmp_path: Path) -> None:
    write = {
        "name": "write",
        "arguments": {"path": ".pi/SYSTEM.md", "content": "MODEL-WRITTEN-PROMPT\n"},
    }
    term = Terminal(tmp_path, [{"toolCalls": [write]}, "written", "after reload", "after trust"])
    trust_file = term.agent_dir / "trust.json"
    term.command("write it", "written")
    assert (term.project / ".pi" / "SYSTEM.md").exists()
    term.say("/reload")
    term.expect("Reloaded")
    term.expect("is not trusted")
    term.expect(PROMPT)
    assert not trust_file.exists()
    term.command("next", "after reload")
    term.say("/trust")
    term.expect("Saved decision: none")
    term.expect("Current session: untrusted")
    term.expect("Choose #")
    term.say("1")
    term.expect("Saved trust decision: trusted")
    term.expect(PROMPT)
    assert json.loads(trust_file.read_text()) == {os.path.realpath(term.project): True}
    term.command("/reload", "Reloaded")
    term.command("last", "after trust")
    assert term.quit() == 0
    systems = [
        json.dumps(e["message"])
        for e in term.entries()
        if e.get("type") == "message" and e["message"].get("role") == "system"
    ]
    # the model's file reached the prompt only after the user trusted the project
    assert not any("MODEL-WRITTEN-PROMPT" in s for s in systems[:-1])
    assert "MODEL-WRITTEN-PROMPT" in systems[-1]


def test_resume_asks_before_opening_a_session_of_another_directory(tmp_path: Path) -> None:
    """A shared session dir (the global ``sessionDir``) lists sessions of every directory."""
    place = Place(tmp_path)
    shared = tmp_path / "shared"
    place.agent.mkdir()
    (place.agent / "settings.json").write_text(json.dumps({"sessionDir": str(shared)}))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    session = _session_file(shared, elsewhere, "other", "old question")
    before = session.read_bytes()
    term = Terminal(tmp_path, ["answered", "again"])
    term.command("hi", "answered")
    term.say("/resume")
    term.expect("Resume Session (Current Folder)")
    term.child.send("old question")  # search, then Enter
    term.child.send("\r")
    term.expect("This session was recorded in")
    term.expect("Resume it there (its tools run there, its AGENTS.md loads)")
    term.child.send("\x1b[B\r")  # Down: "Cancel"
    term.expect("Session not opened.")
    term.expect(PROMPT)
    term.command("still here", "again")
    assert term.quit() == 0
    assert session.read_bytes() == before
    [mine] = [p for p in shared.glob("*.jsonl") if p != session]
    assert _users(mine) == ["hi", "still here"]
