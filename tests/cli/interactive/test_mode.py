"""Interactive mode driven in a real pseudo-terminal (pexpect), with a scripted model.

Each test starts ``pictx`` as a user would, types into it, and checks both what the terminal
shows and what the session file (pi's format, where pi keeps it) records.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_context.session_dirs import default_session_dir, session_file_name
from tests.cli.interactive.pty_terminal import PROMPT


def _users(entries: list[dict[str, Any]]) -> list[str]:
    out = []
    for e in entries:
        message = e.get("message") or {}
        if e.get("type") == "message" and message.get("role") == "user":
            out.append("".join(b.get("text", "") for b in message["content"]))
    return out


def test_conversation_with_tool_call_status_and_multiline(terminal: Any, tmp_path: Path) -> None:
    term = terminal(
        [
            "Hello! I am **scripted**.",
            {
                "text": "Let me look.",
                "toolCalls": [{"name": "bash", "arguments": {"command": "seq 1 30"}}],
                "usage": {"input": 1000, "output": 20, "cacheWrite": 1000},
            },
            {
                "text": "There are thirty lines.",
                "usage": {"input": 100, "output": 20, "cacheRead": 1900},
            },
            "Two lines received.",
        ]
    )
    term.say("hello")
    term.expect("Hello! I am")
    term.expect("scripted/replies · ctx")
    term.expect(PROMPT)
    term.say("count the lines")
    term.expect("bash")
    term.expect("seq 1 30")
    term.expect("22 more lines (collapsed)")
    term.expect("There are thirty lines.")
    # status line: context of the window with percent, cache hit ratio, cost
    term.expect("/128.0k (")
    term.expect("cache 48%")
    term.expect(PROMPT)
    # multi-line input: a trailing backslash continues the line
    term.child.send("first line\\")
    term.child.send("\r")
    term.say("second line")
    term.expect("Two lines received.")
    term.expect(PROMPT)
    term.say("/session")
    term.expect("1 calls, 1 results")
    term.expect("Cache hit ratio")
    term.expect(PROMPT)
    assert term.quit() == 0
    entries = term.entries()
    assert _users(entries) == ["hello", "count the lines", "first line\nsecond line"]
    results = [e["message"] for e in entries if e.get("message", {}).get("role") == "toolResult"]
    assert "30" in results[0]["content"][0]["text"]


def test_compact_tree_with_branch_summary(terminal: Any, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 1}}))
    filler = " ".join(f"word{n}" for n in range(800))
    term = terminal(
        [
            f"Answer one. {filler}",
            f"Answer two. {filler}",
            "## Goal\nSUMMARY-OF-COMPACTION",
            "TURN-PREFIX-SUMMARY",  # the kept part starts inside the last turn: a split turn
            "Answer three.",
            "BRANCH-SUMMARY-TEXT",
            "Answer three again.",
        ]
    )
    term.command("question one", "Answer one.")
    term.command("question two", "Answer two.")
    term.say("/compact keep the answers")
    term.expect("Compacted")
    term.expect("tokens before → about")
    term.expect(PROMPT)
    term.command("question three", "Answer three.")
    # /tree <id> (line by line; the full-screen selector has its own tests): go back to
    # "question three" and summarize the branch being left
    entries = term.entries()
    target = next(
        e["id"]
        for e in entries
        if e.get("message", {}).get("role") == "user" and "question three" in str(e["message"])
    )
    term.say(f"/tree {target}")
    term.expect("Summarize the branch")
    term.say("y")
    term.expect("branch summary")
    term.expect(" tokens.")
    term.expect(PROMPT)
    # the user message comes back into the editor; send it again
    term.command("", "Answer three again.")
    assert term.quit() == 0
    entries = term.entries()
    kinds = [e["type"] for e in entries]
    assert "compaction" in kinds
    compaction = next(e for e in entries if e["type"] == "compaction")
    assert "SUMMARY-OF-COMPACTION" in compaction["summary"]
    summary = next(e for e in entries if e["type"] == "branch_summary")
    assert "BRANCH-SUMMARY-TEXT" in summary["summary"]
    left = next(e for e in entries if "Answer three." in json.dumps(e.get("message", {})))
    assert summary["fromId"] == left["id"]
    # the summary hangs where the user went back to: the parent of "question three"
    asked = [e for e in entries if "question three" in json.dumps(e.get("message", {}))]
    assert summary["parentId"] == asked[0]["parentId"]
    # the question came back into the editor and was sent again from the new position
    assert asked[1]["parentId"] == summary["id"]


def test_reload_after_editing_agents_md_and_skill_command(terminal: Any, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "AGENTS.md").write_text("Rule: ALPHA-RULE\n")
    skill = tmp_path / "agent" / "skills" / "greet"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: greet\ndescription: Greets people politely.\n---\nSay GREETING-BODY to {{who}}.\n"
    )
    term = terminal(["First.", "Second.", "Greeted."])
    term.command("hi", "First.")
    (project / "AGENTS.md").write_text("Rule: BETA-RULE\n")
    term.command("/reload", "Reloaded")
    term.command("again", "Second.")
    # completion of skill names
    term.child.send("/skill:gr")
    term.child.send("\t")
    term.expect("eet")
    term.say(" the team")
    term.expect("Greeted.")
    term.expect(PROMPT)
    assert term.quit() == 0
    entries = term.entries()
    systems = [
        json.dumps(e["message"]) for e in entries if e.get("message", {}).get("role") == "system"
    ]
    assert "ALPHA-RULE" in systems[0]
    assert "BETA-RULE" in systems[-1]
    last_user = _users(entries)[-1]
    assert '<skill name="greet"' in last_user
    assert "GREETING-BODY" in last_user
    assert last_user.rstrip().endswith("the team")


def test_escape_and_ctrl_c_abort_a_slow_answer(terminal: Any) -> None:
    term = terminal(
        [{"text": "never shown", "delay": 600}, {"text": "nor this", "delay": 600}, "After abort."]
    )
    for key in ("\x1b", "\x03"):  # Esc, then Ctrl-C
        term.say("take your time")
        term.expect("take your time")
        term.expect("\n")
        term.child.send(key)
        term.expect("Aborting")
        term.expect(PROMPT)
    term.command("next", "After abort.")
    assert term.quit() == 0
    entries = term.entries()
    assert _users(entries) == ["take your time", "take your time", "next"]
    answers = [e["message"] for e in entries if e.get("message", {}).get("role") == "assistant"]
    assert answers[-1]["content"] == [{"type": "text", "text": "After abort."}]
    assert "never shown" not in json.dumps(entries)


def test_export_from_the_terminal(terminal: Any, tmp_path: Path) -> None:
    term = terminal(["Exported answer."])
    term.command("hello", "Exported answer.")
    term.command("/export out.html", "Exported to:")
    term.command("/export branch.jsonl", "Exported to:")
    assert term.quit() == 0
    html = (tmp_path / "proj" / "out.html").read_text()
    assert "Exported answer." in html
    lines = (tmp_path / "proj" / "branch.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["type"] == "session"


def test_session_commands_name_label_model_fork_new_resume(terminal: Any, tmp_path: Path) -> None:
    second = tmp_path / "second.json"
    second.write_text(json.dumps(["B1", "B2", "B3"]))
    term = terminal(["A1"])
    term.command("hello", "A1")
    term.command("/name My Session", "Session name: My Session")
    term.command("/label first-point", "Label of")
    term.command(f"/model scripted:{second}", "Model: scripted/second")
    term.command("next", "B1")
    term.say("/fork")
    term.expect("Fork from which message?")
    term.child.send("\r")  # the last message ("next") is selected first
    term.expect("Forked to new session")
    term.expect(PROMPT)
    term.say("")  # the forked message is back in the editor: send it
    term.expect("B2")
    term.expect(PROMPT)
    term.command("/new", "New session.")
    term.command("fresh start", "B3")
    term.say("/resume")
    term.expect("Resume Session (Current Folder)")
    term.child.send("My Session")  # search by name
    term.child.send("\r")
    term.expect("Resumed session")
    term.expect(PROMPT)
    term.command("/help", "Esc/Ctrl-C aborts a run")
    assert term.quit() == 0

    files = term.session_files()
    assert len(files) == 3
    sessions = [[json.loads(x) for x in f.read_text().splitlines()] for f in files]
    [fork] = [s for s in sessions if s[0].get("parentSession")]
    [fresh] = [s for s in sessions if _users(s) == ["fresh start"]]
    [original] = [s for s in sessions if s is not fork and s is not fresh]
    fork_file = next(f for f, s in zip(files, sessions, strict=True) if s is fork)
    assert fork_file.name.endswith(f"_{fork[0]['id']}.jsonl")
    assert fork[0]["parentSession"] == str(
        next(f for f, s in zip(files, sessions, strict=True) if s is original)
    )
    assert _users(original) == ["hello", "next"]
    assert _users(fork) == ["hello", "next"]
    assert any(e["type"] == "session_info" and e["name"] == "My Session" for e in original)
    assert any(e["type"] == "label" and e.get("label") == "first-point" for e in original)
    changes = [e for e in original if e["type"] == "model_change"]
    assert (changes[-1]["provider"], changes[-1]["modelId"]) == ("scripted", "second")
    answers = [
        e["message"]["content"][0]["text"]
        for e in fork
        if e.get("message", {}).get("role") == "assistant"
    ]
    assert answers == ["A1", "B2"]


def test_resume_flag_picks_a_saved_session(terminal: Any, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    directory = default_session_dir(project, tmp_path / "agent")
    directory.mkdir(parents=True)
    stamp = "2026-01-05T10:00:00.000Z"
    header = {
        "type": "session",
        "version": 3,
        "id": "saved-1",
        "timestamp": stamp,
        "cwd": str(project),
    }
    user = {
        "type": "message",
        "id": "00000001",
        "parentId": None,
        "timestamp": "2026-01-05T10:00:01.000Z",
        "message": {
            "role": "user",
            "content": [{"type": "text", "text": "an old question"}],
            "timestamp": 1,
        },
    }
    file = directory / session_file_name(stamp, "saved-1")
    file.write_text(json.dumps(header) + "\n" + json.dumps(user) + "\n")
    term = terminal(["Answered."], "-r", wait_prompt=False)
    term.expect("an old question")
    term.expect("Resume #")
    term.say("1")
    term.expect(PROMPT)
    term.command("a new question", "Answered.")
    assert term.quit() == 0
    assert term.session_files() == [file]
    assert _users(term.entries()) == ["an old question", "a new question"]


def test_text_typed_during_a_run_is_kept_for_the_next_prompt(terminal: Any) -> None:
    term = terminal([{"text": "Slow answer.", "delay": 1.5}, "Second answer."])
    term.say("first")
    term.expect("first")
    term.child.send("typed ahead")  # while the answer is still coming (or just after)
    term.expect("Slow answer.")
    term.expect("typed ahead")
    term.child.send("\r")
    term.expect("Second answer.")
    term.expect(PROMPT)
    assert term.quit() == 0
    assert _users(term.entries()) == ["first", "typed ahead"]


def test_tree_back_before_a_compaction_undoes_it(terminal: Any, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 1}}))
    filler = " ".join(f"word{n}" for n in range(800))
    term = terminal(
        [f"Answer one. {filler}", f"Answer two. {filler}", "SUMMARY", "PREFIX", "After undo."]
    )
    term.command("question one", "Answer one.")
    term.command("question two", "Answer two.")
    term.command("/compact", "Compacted")
    answer_two = next(
        e["id"] for e in term.entries() if "Answer two." in json.dumps(e.get("message", {}))
    )
    term.say(f"/tree {answer_two}")
    term.expect("Summarize the branch")
    term.say("n")
    term.expect(f"Now at {answer_two}")
    term.expect(PROMPT)
    term.command("continue without the summary", "After undo.")
    assert term.quit() == 0
    entries = term.entries()
    last_user = next(e for e in entries if "continue without" in json.dumps(e.get("message", {})))
    assert last_user["parentId"] == answer_two
    assert [e["type"] for e in entries].count("compaction") == 1  # still in the file, off the path


EXTENSION = """
def register(pi):
    async def greet(args, ctx):
        pi.append_entry("greeted", {"who": args})

    pi.register_command("greet", greet, description="greet someone")

    def on_input(event, ctx):
        if event.text == "ping":
            pi.append_entry("pinged", {})
            return {"handled": True}
        if event.text.startswith("shout "):
            return {"text": event.text[len("shout "):].upper()}
        return None

    pi.on("input", on_input)
"""


def _install_extension(tmp_path: Path) -> None:
    folder = tmp_path / "agent" / "extensions"
    folder.mkdir(parents=True)
    (folder / "greeter.py").write_text(EXTENSION, encoding="utf-8")


def test_an_extension_command_runs_from_the_terminal(terminal: Any, tmp_path: Path) -> None:
    _install_extension(tmp_path)
    term = terminal(["Hi there."])
    term.say("/help")
    term.expect("greet someone")
    term.expect(PROMPT)
    term.say("/greet world")
    term.expect(PROMPT)
    term.say("hello")
    term.expect("Hi there.")
    term.expect(PROMPT)
    assert term.quit() == 0
    log = (tmp_path / "terminal.log").read_text(encoding="utf-8")
    assert "Unknown command" not in log
    entries = term.entries()
    greeted = [e for e in entries if e.get("type") == "custom" and e["customType"] == "greeted"]
    assert [e["data"] for e in greeted] == [{"who": "world"}]
    assert _users(entries) == ["hello"]  # the command itself was not sent to the model


def test_the_input_event_transforms_or_handles_typed_text(terminal: Any, tmp_path: Path) -> None:
    _install_extension(tmp_path)
    term = terminal(["Loud and clear."])
    term.say("ping")
    term.expect(PROMPT)
    term.say("shout hello")
    term.expect("Loud and clear.")
    term.expect(PROMPT)
    assert term.quit() == 0
    entries = term.entries()
    assert _users(entries) == ["HELLO"]  # transformed; "ping" was handled and never sent
    assert any(e.get("type") == "custom" and e["customType"] == "pinged" for e in entries)


LEAVER = """
def register(pi):
    async def bye(args, ctx):
        ctx.shutdown()

    pi.register_command("bye", bye, description="leave")
    pi.on("session_shutdown", lambda event, ctx: pi.append_entry("left", {"reason": event.reason}))
"""


def test_ctx_shutdown_leaves_once_the_command_is_done(terminal: Any, tmp_path: Path) -> None:
    import pexpect

    folder = tmp_path / "agent" / "extensions"
    folder.mkdir(parents=True)
    (folder / "leaver.py").write_text(LEAVER, encoding="utf-8")
    term = terminal(["Hi there."])
    term.command("hello", "Hi there.")
    term.say("/bye")
    term.child.expect(pexpect.EOF)  # no /quit typed: the extension ended the session
    term.child.close()
    term.log.close()
    assert term.child.exitstatus == 0
    left = [e for e in term.entries() if e.get("customType") == "left"]
    assert [e["data"] for e in left] == [{"reason": "quit"}]
