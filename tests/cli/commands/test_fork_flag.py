"""``--fork <path|id>`` and its combinations with ``--session-id``, run as a user runs them
against a 127.0.0.1 replay server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.replay_world import ReplayWorld, text_reply


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def test_fork_copies_the_entries_verbatim_under_a_new_header(replay_world: ReplayWorld) -> None:
    replay_world.server.add(text_reply("First."), text_reply("Forked answer."))
    made = replay_world.run("-p", "--model", "replay/tiny", "--session-id", "source-1", "one")
    assert made.returncode == 0, made.stderr
    [source] = replay_world.sessions()
    before = _lines(source)

    forked = replay_world.run("-p", "--model", "replay/tiny", "--fork", "source", "two")

    assert forked.returncode == 0, forked.stderr
    assert forked.stdout == "Forked answer.\n"
    assert _lines(source) == before  # the source is left alone
    [new] = [p for p in replay_world.sessions() if p != source]
    lines = _lines(new)
    header = json.loads(lines[0])
    assert header["type"] == "session"
    assert header["id"] != "source-1"
    assert header["cwd"] == str(replay_world.project)
    assert header["parentSession"] == str(source)
    assert lines[1 : len(before)] == before[1:]  # every entry, byte for byte
    users = [json.loads(line) for line in lines if b'"role":"user"' in line]
    assert [u["message"]["content"][0]["text"] for u in users] == ["one", "two"]
    # the second request carries the forked conversation
    sent = replay_world.server.requests[1].json()["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"][-2:] in (
        ["one", "two"],
        [[{"type": "text", "text": "one"}], [{"type": "text", "text": "two"}]],
    )


def test_fork_by_path_with_a_session_id(replay_world: ReplayWorld) -> None:
    replay_world.server.add(text_reply("First."), text_reply("Again."))
    assert replay_world.run("-p", "--model", "replay/tiny", "one").returncode == 0
    [source] = replay_world.sessions()

    forked = replay_world.run(
        "-p", "--model", "replay/tiny", "--fork", str(source), "--session-id", "copy.2", "x"
    )
    assert forked.returncode == 0, forked.stderr
    [new] = [p for p in replay_world.sessions() if p != source]
    assert new.name.endswith("_copy.2.jsonl")
    assert json.loads(_lines(new)[0])["id"] == "copy.2"

    again = replay_world.run(
        "-p", "--model", "replay/tiny", "--fork", str(source), "--session-id", "copy.2", "x"
    )
    assert again.returncode == 1
    assert again.stderr.strip() == "pictx: error: Session already exists with id 'copy.2'"


def test_fork_errors_are_pi_s(replay_world: ReplayWorld) -> None:
    empty = replay_world.project / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    headless = replay_world.project / "headless.jsonl"
    headless.write_text('{"type":"message","id":"a1","parentId":null}\n', encoding="utf-8")
    cases = {
        ("--fork", str(empty)): f"Cannot fork: source session file is empty or invalid: {empty}",
        ("--fork", "missing.jsonl"): (
            "Cannot fork: source session file is empty or invalid: "
            f"{replay_world.project / 'missing.jsonl'}"
        ),
        ("--fork", str(headless)): f"Cannot fork: source session has no header: {headless}",
        ("--fork", "nothing-like-this"): "No session found matching 'nothing-like-this'",
        ("--fork", "x", "-c"): "--fork cannot be combined with --continue",
        ("--fork", "x", "--no-session", "--session", "y"): (
            "--fork cannot be combined with --session, --no-session"
        ),
    }
    for args, message in cases.items():
        done = replay_world.run("-p", "--model", "replay/tiny", *args, "hi")
        assert done.returncode == 1, (args, done.stderr)
        assert done.stderr.strip() == f"pictx: error: {message}", args
    assert replay_world.server.requests == []
    assert replay_world.sessions() == []


def test_session_id_with_no_session_stays_in_memory(replay_world: ReplayWorld) -> None:
    replay_world.server.add(text_reply("Nothing saved."))
    done = replay_world.run(
        "--mode", "json", "--model", "replay/tiny", "--no-session", "--session-id", "mem-1", "hi"
    )
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr
    header = json.loads(done.stdout.splitlines()[0])
    assert header["type"] == "session"
    assert header["id"] == "mem-1"
    assert replay_world.sessions() == []
