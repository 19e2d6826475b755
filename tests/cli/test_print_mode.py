"""``pictx -p`` and ``pictx --mode json`` with a scripted model, as a shell user runs them."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pi_context.cli.commands.chat import build_prompts
from pi_context.cli.print_mode import final_text_outcome
from pi_context.errors import ResourceError
from pi_context.messages import assistant_message, text_block
from pi_context.session_dirs import read_header
from tests.cli.helpers import PictxInProcess, sessions_of

Replies = Callable[[list[Any]], str]


def test_print_prints_final_answer_and_saves_session_where_pi_does(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    run = pictx_in_process("-p", "--model", replies(["Hello **there**"]), "hi")
    assert (run.code, run.out, run.err) == (0, "Hello **there**\n", "")
    [file] = sessions_of(project_as_cwd.parent / "agent", project_as_cwd)
    header = read_header(file)
    assert header is not None
    assert header["cwd"] == str(project_as_cwd)
    assert file.name == re.sub(r"[:.]", "-", header["timestamp"]) + f"_{header['id']}.jsonl"
    kinds = [
        json.loads(line).get("message", {}).get("role") for line in file.read_text().splitlines()
    ]
    assert kinds.count("user") == 1
    assert kinds.count("assistant") == 1


def test_json_mode_streams_header_then_events(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    run = pictx_in_process(
        "--mode", "json", "--model", replies([{"text": "ok", "thinking": "hmm"}]), "go"
    )
    assert run.code == 0
    records = [json.loads(line) for line in run.out.splitlines()]
    assert records[0]["type"] == "session"
    assert records[0]["version"] == 3
    types = [r["type"] for r in records[1:]]
    assert types[0] == "agent_start"
    assert types[-1] == "agent_settled"
    assert "message_update" in types
    ends = [r["message"] for r in records if r["type"] == "message_end"]
    assert ends[-1]["role"] == "assistant"
    assert ends[-1]["content"][-1] == {"type": "text", "text": "ok"}


def test_print_error_goes_to_stderr_with_exit_1(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    run = pictx_in_process(
        "-p", "--model", replies([{"error": "quota exceeded", "errorKind": "authentication"}]), "hi"
    )
    assert run.code == 1
    assert run.out == ""
    assert run.err == "pictx: error: quota exceeded\n"


def test_json_mode_exits_0_even_when_the_answer_failed(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    run = pictx_in_process(
        "--mode",
        "json",
        "--model",
        replies([{"error": "boom", "errorKind": "authentication"}]),
        "hi",
    )
    assert run.code == 0
    last_end = [json.loads(x) for x in run.out.splitlines() if '"message_end"' in x][-1]
    assert last_end["message"]["stopReason"] == "error"


def test_continue_resumes_the_newest_session(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    assert pictx_in_process("-p", "--model", replies(["first answer"]), "one").code == 0
    run = pictx_in_process("-c", "-p", "--model", replies(["second answer"]), "two")
    assert run.out == "second answer\n"
    [file] = sessions_of(project_as_cwd.parent / "agent", project_as_cwd)
    texts = re.findall(r'"text":"([a-z ]+)"', file.read_text())
    assert texts == ["one", "first answer", "two", "second answer"]


def test_session_by_id_prefix_and_no_session(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    pictx_in_process("-p", "--model", replies(["a"]), "one")
    [file] = sessions_of(project_as_cwd.parent / "agent", project_as_cwd)
    header = read_header(file)
    assert header is not None
    run = pictx_in_process("--session", header["id"][:13], "-p", "--model", replies(["b"]), "two")
    assert run.code == 0
    assert file.read_text().count('"role":"user"') == 2
    pictx_in_process("--no-session", "-p", "--model", replies(["c"]), "three")
    assert len(sessions_of(project_as_cwd.parent / "agent", project_as_cwd)) == 1
    missing = pictx_in_process("--session", "zzzz", "-p", "--model", replies(["d"]), "x")
    assert missing.code == 1
    assert "No session found matching 'zzzz'" in missing.err


def test_stdin_and_file_args_form_the_first_prompt(project_as_cwd: Path) -> None:
    (project_as_cwd / "notes.txt").write_text("\ufeffline one\n")
    prompts = build_prompts(["@notes.txt", "Review", "Then this"], "diff", str(project_as_cwd))
    assert prompts == [
        f'diff<file name="{project_as_cwd / "notes.txt"}">\nline one\n\n</file>\nReview',
        "Then this",
    ]
    with pytest.raises(ResourceError, match="File not found"):
        build_prompts(["@missing.txt"], None, str(project_as_cwd))


def test_piped_stdin_forces_print_mode(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    run = pictx_in_process("--model", replies(["piped answer"]), stdin="  question from a pipe \n")
    assert run.out == "piped answer\n"
    [file] = sessions_of(project_as_cwd.parent / "agent", project_as_cwd)
    assert '"text":"question from a pipe"' in file.read_text()


def test_name_and_export_flags(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    pictx_in_process("-p", "-n", " My  run ", "--model", replies(["x"]), "hi")
    [file] = sessions_of(project_as_cwd.parent / "agent", project_as_cwd)
    assert '"name":"My  run"' in file.read_text() or '"name":"My run"' in file.read_text()
    run = pictx_in_process("--export", str(file))
    assert run.code == 0
    out = project_as_cwd / f"pi-session-{file.stem}.html"
    assert run.out == f"Exported to: {out}\n"
    assert "My" in out.read_text()
    assert pictx_in_process("-n", "  ", "-p", "x").code == 1


def test_final_text_outcome_rules() -> None:
    def msg(stop: Any, error: str | None = None) -> Any:
        return assistant_message(
            [text_block("a"), text_block("b")],
            api="x",
            provider="p",
            model="m",
            stop_reason=stop,
            error_message=error,
        )

    assert final_text_outcome(msg("stop")) == (["a", "b"], None, 0)
    assert final_text_outcome(msg("aborted")) == ([], "pictx: error: Request aborted", 1)
    assert final_text_outcome(msg("error", "bad key")) == ([], "pictx: error: bad key", 1)
    lines, note, code = final_text_outcome(msg("length"))
    assert (lines, code) == (["a", "b"], 0)  # the answer is printed; a note, not a failure
    assert note is not None
    assert "output token limit" in note
    assert final_text_outcome(None) == ([], None, 0)


def test_prompt_flags_reach_the_system_prompt(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    (project_as_cwd / "AGENTS.md").write_text("PROJECT-RULE-XYZ\n")
    pictx_in_process("-p", "--model", replies(["a"]), "one")
    pictx_in_process(
        "--no-session",
        "-p",
        "--model",
        replies(["b"]),
        "--system-prompt",
        "CUSTOM-PROMPT-TEXT",
        "--append-system-prompt",
        "APPENDED-1",
        "--append-system-prompt",
        "APPENDED-2",
        "--no-context-files",
        "two",
    )
    [file] = sessions_of(project_as_cwd.parent / "agent", project_as_cwd)
    assert "PROJECT-RULE-XYZ" in file.read_text()
    # the second run was in memory; check what it would send through json mode instead
    run = pictx_in_process(
        "--no-session",
        "--mode",
        "json",
        "--model",
        replies(["c"]),
        "--system-prompt",
        "CUSTOM-PROMPT-TEXT",
        "--append-system-prompt",
        "APPENDED-1",
        "--no-context-files",
        "three",
    )
    system = next(
        json.loads(line)["message"]
        for line in run.out.splitlines()
        if '"message_end"' in line and '"role":"system"' in line
    )
    text = json.dumps(system)
    assert "CUSTOM-PROMPT-TEXT" in text
    assert "APPENDED-1" in text
    assert "PROJECT-RULE-XYZ" not in text


def test_session_of_another_project_is_not_opened_silently(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies, monkeypatch: Any
) -> None:
    other = project_as_cwd.parent / "other"
    other.mkdir()
    monkeypatch.chdir(other)
    pictx_in_process("-p", "--model", replies(["from other"]), "elsewhere")
    [file] = sessions_of(project_as_cwd.parent / "agent", other)
    header = read_header(file)
    assert header is not None
    monkeypatch.chdir(project_as_cwd)
    run = pictx_in_process("--session", header["id"][:8], "-p", "--model", replies(["x"]), "hi")
    assert run.code == 0
    assert f"Session found in different project: {other}" in run.err
    assert file.read_text().count('"role":"user"') == 1
    assert sessions_of(project_as_cwd.parent / "agent", project_as_cwd) == []


def test_continue_in_a_shared_session_dir_filters_by_cwd(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies, monkeypatch: Any
) -> None:
    shared = project_as_cwd.parent / "shared"
    pictx_in_process("--session-dir", str(shared), "-p", "--model", replies(["mine"]), "here")
    other = project_as_cwd.parent / "other"
    other.mkdir()
    monkeypatch.chdir(other)
    pictx_in_process("--session-dir", str(shared), "-p", "--model", replies(["theirs"]), "there")
    monkeypatch.chdir(project_as_cwd)
    pictx_in_process(
        "--session-dir", str(shared), "-c", "-p", "--model", replies(["again"]), "here again"
    )
    texts = sorted(f.read_text() for f in shared.glob("*.jsonl"))
    mine = next(t for t in texts if '"text":"here"' in t)
    assert '"text":"here again"' in mine
    theirs = next(t for t in texts if '"text":"there"' in t)
    assert "here again" not in theirs


def test_sigterm_aborts_a_json_run_with_exit_143(project_as_cwd: Path, replies: Replies) -> None:
    spec = replies([{"text": "too late", "delay": 600}])
    env = dict(os.environ)
    with subprocess.Popen(
        [sys.executable, "-m", "pi_context.cli.main", "--mode", "json", "--model", spec, "wait"],
        cwd=project_as_cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            if '"message_end"' in line and '"role":"user"' in line:
                break
        proc.send_signal(signal.SIGTERM)
        rest = proc.stdout.read()
        code = proc.wait(timeout=60)
    assert code == 143
    assert '"type":"agent_settled","aborted":true' in rest


def test_session_path_that_does_not_exist_becomes_a_new_session(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    run = pictx_in_process(
        "--session", "sub/new.jsonl", "-p", "--model", replies(["made"]), "hello"
    )
    assert run.code == 0
    header = read_header(project_as_cwd / "sub" / "new.jsonl")
    assert header is not None
    assert header["cwd"] == str(project_as_cwd)
    again = pictx_in_process(
        "--session", "sub/new.jsonl", "-p", "--model", replies(["again"]), "more"
    )
    assert again.out == "again\n"
    assert (project_as_cwd / "sub" / "new.jsonl").read_text().count('"role":"user"') == 2


def test_session_dir_setting_of_a_trusted_project_is_honoured(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    (project_as_cwd / ".pi").mkdir()
    (project_as_cwd / ".pi" / "settings.json").write_text(json.dumps({"sessionDir": "kept"}))
    assert pictx_in_process("trust").code == 0
    run = pictx_in_process("-p", "--model", replies(["ok"]), "hi")
    assert run.code == 0
    assert len(list((project_as_cwd / "kept").glob("*.jsonl"))) == 1
    assert sessions_of(project_as_cwd.parent / "agent", project_as_cwd) == []


def test_a_broken_settings_file_is_named_in_the_error(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    agent = project_as_cwd.parent / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text("{not json")
    run = pictx_in_process("-p", "--model", replies(["ok"]), "hi")
    assert run.code == 1
    assert str(agent / "settings.json") in run.err
    assert sessions_of(agent, project_as_cwd) == []


def test_untrusted_project_resources_are_named_on_stderr(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    (project_as_cwd / ".pi").mkdir(exist_ok=True)
    (project_as_cwd / ".pi" / "SYSTEM.md").write_text("Project prompt.\n", encoding="utf-8")
    run = pictx_in_process("-p", "--model", replies(["fine"]), "hi")
    assert run.code == 0
    assert run.out == "fine\n"
    assert "is not trusted" in run.err
    assert "pictx trust" in run.err

    trusted = pictx_in_process("trust", str(project_as_cwd))
    assert trusted.code == 0, trusted.err
    again = pictx_in_process("-p", "--model", replies(["fine"]), "hi")
    assert "not trusted" not in again.err


_RULES_EXTENSION = """
def register(pi):
    @pi.on("before_agent_start")
    def rules(event, ctx):
        event.set_section("team_rules", "FROM-{name}")
"""


def _system_sections(file: Path) -> dict[str, Any]:
    sections: dict[str, Any] = {}
    for line in file.read_text().splitlines():
        record = json.loads(line)
        message = record.get("message") or {}
        if message.get("role") == "system":
            sections.update(message.get("sections") or {})
    return sections


def test_extension_flags_load_explicit_paths_and_skip_discovery(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    agent = project_as_cwd.parent / "agent"
    (agent / "extensions").mkdir(parents=True)
    (agent / "extensions" / "found.py").write_text(_RULES_EXTENSION.format(name="FOUND"))
    (project_as_cwd / "mine.py").write_text(
        _RULES_EXTENSION.replace("team_rules", "mine").format(name="MINE")
    )
    assert pictx_in_process("-p", "--model", replies(["a"]), "-e", "mine.py", "one").code == 0
    [first] = sessions_of(agent, project_as_cwd)
    sections = _system_sections(first)
    assert "FROM-FOUND" in sections["team_rules"]
    assert "FROM-MINE" in sections["mine"]
    first.unlink()
    run = pictx_in_process("-p", "--model", replies(["b"]), "-ne", "--extension", "mine.py", "two")
    assert run.code == 0, run.err
    [second] = sessions_of(agent, project_as_cwd)
    sections = _system_sections(second)
    assert "team_rules" not in sections
    assert "FROM-MINE" in sections["mine"]


def test_approve_trusts_the_project_for_one_run(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    (project_as_cwd / ".pi").mkdir()
    (project_as_cwd / ".pi" / "APPEND_SYSTEM.md").write_text("PROJECT-APPEND\n")
    agent = project_as_cwd.parent / "agent"
    assert pictx_in_process("-p", "--model", replies(["a"]), "-na", "one").code == 0
    [file] = sessions_of(agent, project_as_cwd)
    assert "PROJECT-APPEND" not in file.read_text()
    file.unlink()
    assert pictx_in_process("-p", "--model", replies(["b"]), "-a", "two").code == 0
    [file] = sessions_of(agent, project_as_cwd)
    assert "PROJECT-APPEND" in file.read_text()
    assert not (agent / "trust.json").exists()  # for this run only


def test_a_first_prompt_without_a_key_leaves_no_session_file(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as pi 1.6.0: the prompt is refused before anything is stored
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    run = pictx_in_process("-p", "--model", "openai/gpt-4o", "hi")
    assert run.code == 1
    assert run.err.startswith('pictx: error: No API key found for provider "openai"')
    assert sessions_of(project_as_cwd.parent / "agent", project_as_cwd) == []


def test_json_mode_streams_a_running_commands_output_before_it_ends(
    project_as_cwd: Path, replies: Replies
) -> None:
    """``--mode json`` writes each ``tool_execution_update`` as it happens: the command waits
    for a file this test creates only after reading the update with its first line."""
    command = "echo building; until [ -f gate ]; do sleep 0.02; done; echo done"
    spec = replies(
        [{"text": "", "toolCalls": [{"name": "bash", "arguments": {"command": command}}]}, "ok"]
    )
    with subprocess.Popen(
        [sys.executable, "-m", "pi_context.cli.main", "--mode", "json", "--model", spec, "go"],
        cwd=project_as_cwd,
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        before: list[dict[str, Any]] = []
        for line in proc.stdout:
            before.append(json.loads(line))
            update = before[-1]
            if update["type"] == "tool_execution_update" and update["partialResult"]["content"] == [
                {"type": "text", "text": "building\n"}
            ]:
                break
        (project_as_cwd / "gate").touch()
        after = [json.loads(line) for line in proc.stdout]
        assert proc.wait(timeout=60) == 0
    kinds = [r["type"] for r in before]
    assert "tool_execution_end" not in kinds
    first = next(r for r in before if r["type"] == "tool_execution_update")
    assert first["partialResult"] == {"content": []}
    end = next(r for r in after if r["type"] == "tool_execution_end")
    assert end["result"]["content"] == [{"type": "text", "text": "building\ndone\n"}]
