"""``pictx session search``: ranked hits, JSON shape, branches, terminal safety, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pi_context import _json
from pi_context.cli.main import cli, main
from pi_context.messages import text_block, tool_result_message, user_message
from pi_context.session import Session
from pi_context.testing import FixedClock, SequentialIds

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "session.jsonl"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def compacted(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    s = Session.create(path, cwd="/w", ids=SequentialIds(), clock=FixedClock())
    s.append_message(user_message("the heron code is 4417"))
    s.append_message(tool_result_message("c", "bash", [text_block("heron \x1b]52;c;aGk=\x07 ok")]))
    kept = s.append_message(user_message("heron again, later")).id
    s.append_compaction("About herons.", kept, 10)
    s.close()
    return path


def test_json_lists_hits_with_what_replaced_them(compacted: Path) -> None:
    code, out, _ = run("session", "search", str(compacted), "heron 4417", "--json")
    assert code == 0
    hits = json.loads(out)["hits"]
    assert hits[0] == {
        "id": "00000001",
        "role": "user",
        "timestamp": hits[0]["timestamp"],
        "snippet": "the heron code is 4417",
        "score": hits[0]["score"],
        "replacedBy": "00000004",
    }
    by_id = {h["id"]: h for h in hits}
    assert by_id["00000003"]["replacedBy"] is None
    assert all(
        set(h) == {"id", "role", "timestamp", "snippet", "score", "replacedBy"} for h in hits
    )


def test_readable_list_is_terminal_safe(compacted: Path) -> None:
    code, out, _ = run("session", "search", str(compacted), "heron", "--limit", "5")
    assert code == 0
    assert "\x1b" not in out
    assert "\x07" not in out
    assert "␛]52;c;aGk=␇" in out
    assert "replaced by 00000004" in out
    assert out.startswith("1. ")


def test_json_output_escapes_controls(compacted: Path) -> None:
    code, out, _ = run("session", "search", str(compacted), "ok", "--json")
    assert code == 0
    assert "\x1b" not in out
    assert "\\u001b]52" in out


def test_limit_no_match_and_all_branches(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    s = Session.create(path, cwd="/w", ids=SequentialIds(), clock=FixedClock())
    root = s.append_message(user_message("walrus start")).id
    s.append_message(user_message("walrus left branch"))
    s.move_leaf(root)
    s.append_message(user_message("walrus right branch"))
    s.close()
    code, out, _ = run("session", "search", str(path), "walrus", "--json")
    assert [h["id"] for h in json.loads(out)["hits"]] == ["00000001", "00000003"] or {
        h["id"] for h in json.loads(out)["hits"]
    } == {"00000001", "00000003"}
    code, out, _ = run("session", "search", str(path), "walrus", "--all-branches", "--json")
    assert {h["id"] for h in json.loads(out)["hits"]} == {"00000001", "00000002", "00000003"}
    code, out, _ = run("session", "search", str(path), "walrus", "--limit", "1", "--json")
    assert len(json.loads(out)["hits"]) == 1
    code, out, _ = run("session", "search", str(path), "zebra")
    assert (code, out.strip()) == (0, "no matches")
    code, out, _ = run("session", "search", str(path), "zebra", "--json")
    assert json.loads(out) == {"hits": []}


def test_the_example_session(tmp_path: Path) -> None:
    code, out, _ = run("session", "search", str(EXAMPLE), "sort", "--json")
    assert code == 0
    assert json.loads(out)["hits"]


def test_legacy_file_is_searched_in_memory(tmp_path: Path) -> None:
    path = tmp_path / "legacy.jsonl"
    header = {"type": "session", "id": "legacy-1", "timestamp": "2025-01-01T00:00:00.000Z"}
    entry = {
        "type": "message",
        "timestamp": "2025-01-01T00:00:01.000Z",
        "message": user_message("turnstone", timestamp=1),
    }
    path.write_bytes(_json.dumps(header) + b"\n" + _json.dumps(entry) + b"\n")
    code, out, _ = run("session", "search", str(path), "turnstone", "--json")
    assert code == 0
    assert len(json.loads(out)["hits"]) == 1


def test_not_a_session_and_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("hello\n")
    assert main(["session", "search", str(bad), "x"]) == 1
    assert (
        capsys.readouterr().err
        == f"pictx: error: {bad}: not a valid pi session (no session header line)\n"
    )
    missing = tmp_path / "none.jsonl"
    assert main(["session", "search", str(missing), "x"]) == 1
    assert capsys.readouterr().err == f"pictx: error: {missing}: no such session file\n"
