"""``pictx --session URL#ID [--tenant T]``: the agent on a session of a PostgreSQL store, in
print mode and interactively (separate ``pictx`` processes), and the rule's one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.interactive.pty_terminal import Terminal
from tests.helpers import ProcessRun, pictx_process
from tests.store.pg_server import PASSWORD, PgServer


def _replies(tmp_path: Path, name: str, items: list[Any]) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    return f"scripted:{path}"


def _pictx(tmp_path: Path, *args: str) -> ProcessRun:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    env = {"HOME": str(home), "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "LANG": "C.UTF-8"}
    return pictx_process(*args, cwd=project, env=env)


def _context(tmp_path: Path, stored: str) -> list[dict[str, Any]]:
    shown = _pictx(tmp_path, "session", "context", stored, "--tenant", "acme", "--json")
    assert shown.code == 0, shown.stderr
    messages = [item["message"] for item in json.loads(shown.stdout)["messages"]]
    return [m for m in messages if m["role"] != "system"]


def _texts(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    out = []
    for message in messages:
        content = message["content"]
        text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
        out.append((message["role"], text))
    return out


def test_print_mode_runs_on_a_stored_session_and_session_context_shows_it(
    pg_server: PgServer, tmp_path: Path
) -> None:
    url = pg_server.url(pg_server.new_database())
    assert _pictx(tmp_path, "store", "migrate", url).code == 0
    stored = f"{url}#conv-1"
    model = _replies(tmp_path, "one", ["The first answer."])
    done = _pictx(
        tmp_path, "--model", model, "-p", "hello", "--session", stored, "--tenant", "acme"
    )
    assert done.code == 0, done.stderr
    assert done.stdout.strip() == "The first answer."
    assert _texts(_context(tmp_path, stored)) == [
        ("user", "hello"),
        ("assistant", "The first answer."),
    ]
    # a second process resumes it
    model = _replies(tmp_path, "two", ["The second answer."])
    again = _pictx(
        tmp_path, "--model", model, "-p", "more", "--session", stored, "--tenant", "acme"
    )
    assert again.code == 0, again.stderr
    assert _texts(_context(tmp_path, stored))[2:] == [
        ("user", "more"),
        ("assistant", "The second answer."),
    ]
    listed = _pictx(tmp_path, "store", "ls", url, "--tenant", "acme")
    assert listed.stdout.split("\t")[0] == "conv-1"
    assert _pictx(tmp_path, "store", "ls", url).stdout == ""  # not in the default tenant


def test_the_url_id_rule_is_a_one_line_error_without_the_password(
    pg_server: PgServer, tmp_path: Path
) -> None:
    url = pg_server.url(pg_server.new_database())
    model = _replies(tmp_path, "none", ["unused"])
    for argument in (url, f"{url}#"):
        done = _pictx(tmp_path, "--model", model, "-p", "hi", "--session", argument)
        assert done.code != 0
        assert "URL#ID" in done.stderr
        assert len(done.stderr_lines) <= 2  # click's usage line, then the rule
        assert PASSWORD not in done.stderr + done.stdout
        info = _pictx(tmp_path, "session", "info", argument)
        assert info.code != 0
        assert "URL#ID" in info.stderr
        assert PASSWORD not in info.stderr + info.stdout
    tenant = _pictx(tmp_path, "--model", model, "-p", "hi", "--tenant", "acme")
    assert tenant.code == 1
    assert "--tenant needs --session URL#ID" in tenant.stderr
    wrong = pg_server.password_url(PASSWORD + "-nope")
    refused = _pictx(tmp_path, "--model", model, "-p", "hi", "--session", f"{wrong}#s")
    assert refused.code == 1
    assert PASSWORD + "-nope" not in refused.stderr + refused.stdout
    assert len(refused.stderr_lines) == 1


def test_interactive_mode_runs_on_a_stored_session(pg_server: PgServer, tmp_path: Path) -> None:
    url = pg_server.url(pg_server.new_database())
    assert _pictx(tmp_path, "store", "migrate", url).code == 0
    stored = f"{url}#conv-2"
    term = Terminal(tmp_path, ["Interactive answer."], "--session", stored, "--tenant", "acme")
    term.command("a question", "Interactive answer.")
    assert term.quit() == 0
    assert term.session_files() == []  # no session file: the session is in the store
    assert _texts(_context(tmp_path, stored)) == [
        ("user", "a question"),
        ("assistant", "Interactive answer."),
    ]


def test_problems_of_a_stored_session_are_reported_naming_url_id(tmp_path: Path) -> None:
    header = {
        "type": "session",
        "version": 3,
        "id": "damaged",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "cwd": str(tmp_path / "proj"),  # where _pictx runs: no other directory to allow
    }
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text(json.dumps(header) + "\n" + "not json\n" * 7, encoding="utf-8")
    store = tmp_path / "store"
    assert _pictx(tmp_path, "store", "import", str(store), str(damaged)).code == 0
    model = _replies(tmp_path, "damaged", ["fine"])
    done = _pictx(tmp_path, "--model", model, "-p", "hi", "--session", f"{store}#damaged")
    assert done.code == 0, done.stderr
    assert "`pictx session info URL#ID` lists them" in done.stderr
    assert "None" not in done.stderr


def test_new_and_resume_in_a_terminal_stay_in_the_store_and_tenant(
    pg_server: PgServer, tmp_path: Path
) -> None:
    url = pg_server.url(pg_server.new_database())
    assert _pictx(tmp_path, "store", "migrate", url).code == 0
    stored = f"{url}#conv-3"
    replies = ["First answer.", "Second answer.", "Third answer."]
    term = Terminal(tmp_path, replies, "--session", stored, "--tenant", "acme")
    term.command("hello", "First answer.")
    term.command("/new", "New session.")
    term.command("again", "Second answer.")
    term.command("/session", "(in the store of --session URL#ID)")
    term.say("/resume")
    term.expect("conv-3")
    term.expect("Resume #")
    listed = _pictx(tmp_path, "store", "ls", url, "--tenant", "acme").stdout.splitlines()
    ids = sorted(line.split("\t")[0] for line in listed)  # the listing's order: by id
    assert len(ids) == 2
    assert "conv-3" in ids
    term.command(str(ids.index("conv-3") + 1), "Resumed stored session conv-3.")
    term.command("third", "Third answer.")
    assert term.quit() == 0
    assert term.session_files() == []  # never a session file
    assert _texts(_context(tmp_path, stored)) == [
        ("user", "hello"),
        ("assistant", "First answer."),
        ("user", "third"),
        ("assistant", "Third answer."),
    ]
    [other] = [i for i in ids if i != "conv-3"]
    assert _texts(_context(tmp_path, f"{url}#{other}")) == [
        ("user", "again"),
        ("assistant", "Second answer."),
    ]
    assert _pictx(tmp_path, "store", "ls", url).stdout == ""  # nothing in the default tenant
