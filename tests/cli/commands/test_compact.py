"""``pictx compact`` and ``pictx session compaction``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_context.cli.main import main
from pi_context.session import Session
from tests.compaction.helpers import build_session


@pytest.fixture(autouse=True)
def _agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.delenv("PICTX_SCRIPTED_MODEL", raising=False)


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    session = build_session(6, path)
    session.close()
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_dry_run_reports_and_writes_nothing(session_file: Path, capsys: Any) -> None:
    before = session_file.read_bytes()
    code, out, _ = run(
        capsys, "compact", str(session_file), "--dry-run", "--json", "--keep-recent-tokens", "527"
    )
    assert code == 0
    assert session_file.read_bytes() == before
    report = json.loads(out)
    assert set(report) == {
        "firstKeptEntryId",
        "tokensBefore",
        "tokensAfter",
        "isSplitTurn",
        "messagesToSummarize",
        "turnPrefixMessages",
        "readFiles",
        "modifiedFiles",
        "serializedHistory",
        "serializedTurnPrefix",
    }
    assert report["isSplitTurn"] is False
    assert report["messagesToSummarize"][0] == "00000001"
    assert report["turnPrefixMessages"] == []
    assert report["readFiles"] == [f"src/file{n}.py" for n in range(5)]
    assert report["serializedHistory"].startswith("[User]: Request 0")
    assert report["tokensAfter"] < report["tokensBefore"]


def test_offline_compaction_appends_an_entry(session_file: Path, capsys: Any) -> None:
    code, out, _ = run(
        capsys, "compact", str(session_file), "--offline", "--keep-recent-tokens", "527"
    )
    assert code == 0
    assert "appended compaction" in out
    with Session.open(session_file) as session:
        entry = session.entries[-1]
        assert entry.type == "compaction"
        assert "## Goal" in entry.data["summary"]
        assert entry.data["details"]["readFiles"]


def test_model_compaction_with_scripted_model(
    session_file: Path, tmp_path: Path, capsys: Any
) -> None:
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([{"text": "## Goal\nscripted summary", "usage": {"input": 5}}]))
    code, out, _ = run(
        capsys,
        "compact",
        str(session_file),
        "--model",
        f"scripted:{replies}",
        "--instructions",
        "parser",
        "--json",
        "--keep-recent-tokens",
        "527",
    )
    assert code == 0
    report = json.loads(out)
    assert report["offline"] is False
    with Session.open(session_file) as session:
        assert session.entries[-1].data["summary"].startswith("## Goal\nscripted summary")


def test_second_compact_is_refused_with_one_line(session_file: Path, capsys: Any) -> None:
    assert (
        run(capsys, "compact", str(session_file), "--offline", "--keep-recent-tokens", "527")[0]
        == 0
    )
    code, _, err = run(capsys, "compact", str(session_file), "--offline")
    assert code == 1
    assert err.strip() == "pictx: error: Already compacted"


def test_session_compaction_shows_what_was_replaced(session_file: Path, capsys: Any) -> None:
    run(capsys, "compact", str(session_file), "--offline", "--keep-recent-tokens", "527")
    with Session.open(session_file) as session:
        compaction_id = session.entries[-1].id
        kept = session.entries[-1].data["firstKeptEntryId"]
    code, out, _ = run(capsys, "session", "compaction", str(session_file), compaction_id, "--json")
    assert code == 0
    shown = json.loads(out)
    ids = [e["id"] for e in shown["summarizedEntries"]]
    assert ids[0] == "00000001"
    assert kept not in ids
    assert shown["keptEntries"][0] == kept
    code, out, _ = run(capsys, "session", "compaction", str(session_file), compaction_id)
    assert code == 0
    assert "== summarized entries ==" in out
    assert "Request 0" in out
    assert "## Goal" in out


def test_session_compaction_rejects_a_non_compaction(session_file: Path, capsys: Any) -> None:
    code, _, err = run(capsys, "session", "compaction", str(session_file), "00000001")
    assert code == 1
    assert "not a compaction" in err


def test_dry_run_resolves_a_registry_model_and_its_overrides(
    session_file: Path, tmp_path: Path, capsys: Any
) -> None:
    (tmp_path / "agent" / "settings.json").write_text(
        json.dumps(
            {
                "compaction": {
                    "modelOverrides": {"anthropic/claude-sonnet-4-5": {"keepRecentTokens": 527}}
                }
            }
        )
    )
    code, out, err = run(
        capsys,
        "compact",
        str(session_file),
        "--model",
        "anthropic/claude-sonnet-4-5",
        "--dry-run",
        "--json",
    )
    assert code == 0, err
    by_model = json.loads(out)
    code, out, _ = run(
        capsys, "compact", str(session_file), "--dry-run", "--json", "--keep-recent-tokens", "527"
    )
    assert code == 0
    assert by_model == json.loads(out)
    code, _, err = run(capsys, "compact", str(session_file), "--model", "nope/nothing")
    assert code == 1
    assert "nope/nothing" in err


def test_report_describes_the_preparation_the_compaction_used(
    session_file: Path, tmp_path: Path, capsys: Any
) -> None:
    # masking runs inside the compaction: the report must show what was really summarized
    (tmp_path / "agent" / "settings.json").write_text(
        json.dumps({"compaction": {"maskObservations": True, "maskKeepTurns": 1}})
    )
    code, out, _ = run(
        capsys, "compact", str(session_file), "--offline", "--json", "--keep-recent-tokens", "527"
    )
    assert code == 0
    report = json.loads(out)
    with Session.open(session_file) as session:
        compaction = session.entries[-1]
        assert compaction.type == "compaction"
        assert any(e.type == "context_edit" for e in session.entries)
        assert report["entryId"] == compaction.id
        assert report["firstKeptEntryId"] == compaction.data["firstKeptEntryId"]
        assert "masked" in report["serializedHistory"]


def _local_session(path: Path, turns: int, words: int) -> Path:
    """A conversation with the embedded model (8,192-token window)."""
    from pi_context.messages import assistant_message, text_block, user_message

    session = Session.create(path, cwd=str(path.parent))
    for n in range(turns):
        filler = " ".join(f"w{n}x{k}" for k in range(words))
        session.append_message(user_message(f"question {n} {filler}", timestamp=n))
        session.append_message(
            assistant_message(
                [text_block(f"answer {n} {filler}")],
                api="llama-cpp",
                provider="local",
                model="smollm2-135m-instruct",
                timestamp=n,
            )
        )
    session.close()
    return path


def test_dry_run_uses_the_window_of_the_sessions_model(tmp_path: Path, capsys: Any) -> None:
    path = _local_session(tmp_path / "local.jsonl", turns=4, words=400)
    code, out, err = run(capsys, "compact", str(path), "--dry-run", "--json")
    assert code == 0, err
    report = json.loads(out)
    # the CLI's default 20,000 kept tokens would keep everything; the agent keeps a tenth
    # of the 8,192-token window, so the older turns are summarized
    assert report["messagesToSummarize"]
    assert report["tokensAfter"] < report["tokensBefore"]


def test_nothing_to_compact_says_why_with_the_numbers(tmp_path: Path, capsys: Any) -> None:
    path = _local_session(tmp_path / "small.jsonl", turns=1, words=5)
    code, _, err = run(capsys, "compact", str(path), "--dry-run", "--json")
    assert code == 1
    assert err.startswith("pictx: error: Nothing to compact (session too small): the branch")
    assert "newest 819 are kept verbatim" in err
    assert "local/smollm2-135m-instruct's 8192-token window" in err
    assert "--keep-recent-tokens" in err
