"""``pictx store migrate|import|export|ls``: over a directory and over PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import PictxInProcess
from tests.store.pg_server import PASSWORD, PgServer

SESSIONS = Path(__file__).resolve().parents[2] / "data" / "conformance" / "sessions"
BRANCHED = SESSIONS / "small" / "branched.jsonl"
CHAT = SESSIONS / "small" / "linear_chat.jsonl"


@pytest.fixture(params=["file", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "file":
        return str(tmp_path / "store")
    server: PgServer = request.getfixturevalue("pg_server")
    return server.url(server.new_database())


def _id(path: Path) -> str:
    return str(json.loads(path.read_bytes().split(b"\n", 1)[0])["id"])


def test_migrate_import_ls_export_round_trip(
    pictx_in_process: PictxInProcess, url: str, tmp_path: Path
) -> None:
    assert pictx_in_process("store", "migrate", url).code == 0
    done = pictx_in_process("store", "import", url, str(BRANCHED), str(CHAT), "--tenant", "acme")
    assert done.code == 0, done.err
    assert [line.split("\t")[1] for line in done.out.splitlines()] == [_id(BRANCHED), _id(CHAT)]
    listed = pictx_in_process("store", "ls", url, "--tenant", "acme")
    assert listed.code == 0
    assert sorted(line.split("\t")[0] for line in listed.out.splitlines()) == sorted(
        [_id(BRANCHED), _id(CHAT)]
    )
    assert pictx_in_process("store", "ls", url).out == ""  # the default tenant holds none of them
    out = tmp_path / "out.jsonl"
    assert (
        pictx_in_process("store", "export", url, _id(BRANCHED), str(out), "--tenant", "acme").code
        == 0
    )
    assert out.read_bytes() == BRANCHED.read_bytes()


def test_errors_are_one_line(pictx_in_process: PictxInProcess, url: str, tmp_path: Path) -> None:
    pictx_in_process("store", "migrate", url)
    missing = pictx_in_process("store", "export", url, "nope", str(tmp_path / "x.jsonl"))
    assert missing.code == 1
    assert "no session 'nope'" in missing.err
    assert len(missing.err.strip().splitlines()) == 1


def test_an_unmigrated_database_names_the_migrate_command(
    pictx_in_process: PictxInProcess, pg_server: PgServer
) -> None:
    url = pg_server.url(pg_server.new_database())
    done = pictx_in_process("store", "ls", url)
    assert done.code == 1
    assert "pictx store migrate" in done.err


def test_a_wrong_password_never_reaches_the_terminal(
    pictx_in_process: PictxInProcess, pg_server: PgServer
) -> None:
    wrong = PASSWORD + "-nope"
    done = pictx_in_process("store", "ls", pg_server.password_url(wrong))
    assert done.code == 1
    assert wrong not in done.err + done.out
    assert "password authentication failed" in done.err


def test_session_commands_read_a_stored_session_by_url_and_id(
    pictx_in_process: PictxInProcess, url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    pictx_in_process("store", "migrate", url)
    pictx_in_process("store", "import", url, str(BRANCHED), "--tenant", "acme")
    stored = f"{url}#{_id(BRANCHED)}"
    for command in (["info", "--json"], ["tree"], ["context", "--json"]):
        from_store = pictx_in_process("session", *command, stored, "--tenant", "acme")
        from_file = pictx_in_process("session", *command, str(BRANCHED))
        assert from_store.code == 0, from_store.err
        if command[0] == "info":  # the same facts; "file" names the copy that was read
            facts, expected = json.loads(from_store.out), json.loads(from_file.out)
            assert facts.pop("file") != expected.pop("file")
            assert facts == expected
        else:
            assert from_store.out == from_file.out
    found = pictx_in_process("session", "search", stored, "summary", "--tenant", "acme", "--json")
    assert found.code == 0, found.err
    assert (
        found.out == pictx_in_process("session", "search", str(BRANCHED), "summary", "--json").out
    )
    missing = pictx_in_process(
        "session", "info", stored
    )  # the default tenant holds no such session
    assert missing.code == 1
    assert "no session" in missing.err
