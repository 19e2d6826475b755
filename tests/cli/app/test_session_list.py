"""Fast session summaries for /resume agree with the exact reader, and are cached."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pi_context import session_dirs
from pi_context.cli.app.session_list import SessionLister, summarize_session


def _write(
    path: Path, entries: list[dict[str, Any]], *, separators: tuple[str, str] = (",", ":")
) -> Path:
    header = {
        "type": "session",
        "version": 3,
        "id": path.stem,
        "timestamp": "2026-01-05T10:00:00.000Z",
        "cwd": "/work",
    }
    lines = [json.dumps(e, separators=separators) for e in [header, *entries]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _msg(eid: str, role: str, content: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": eid,
        "parentId": None,
        "timestamp": "2026-01-05T10:00:01.000Z",
        "message": {"role": role, "content": content, "timestamp": 1},
    }


ENTRIES = [
    _msg("1", "user", [{"type": "image", "data": "x"}]),  # no text: not the first message
    _msg("2", "user", [{"type": "text", "text": "  the\nfirst   question "}]),
    _msg(
        "3",
        "assistant",
        [
            {
                "type": "toolCall",
                "id": "t",
                "name": "bash",
                "arguments": {"command": 'echo "role":"user"'},
            }
        ],
    ),
    _msg("4", "toolResult", [{"type": "text", "text": "x" * 100_000}]),
    {"type": "session_info", "id": "5", "parentId": "4", "name": "old name"},
    _msg("6", "user", "a plain string"),
    {"type": "session_info", "id": "7", "parentId": "6", "name": "  new name  "},
]


def test_summary_matches_the_exact_reader(tmp_path: Path) -> None:
    path = _write(tmp_path / "s1.jsonl", ENTRIES)
    fast = summarize_session(path)
    exact = session_dirs.read_session_info(path)
    assert fast is not None
    assert exact is not None
    assert fast.name == exact.name == "new name"
    assert fast.first_message == exact.first_message == "the first question"
    assert fast.message_count == exact.message_count == 4
    assert (fast.id, fast.cwd, fast.created) == (exact.id, exact.cwd, exact.created)


def test_other_json_spacing_is_read_too(tmp_path: Path) -> None:
    for separators in ((", ", ": "), (" , ", " : ")):
        path = _write(tmp_path / "spaced.jsonl", ENTRIES, separators=separators)
        fast = summarize_session(path)
        assert fast is not None
        assert (fast.name, fast.first_message) == ("new name", "the first question")
        assert fast.message_count == 4


def test_not_a_session_and_empty_sessions(tmp_path: Path) -> None:
    (tmp_path / "junk.jsonl").write_text("not json\n")
    assert summarize_session(tmp_path / "junk.jsonl") is None
    empty = _write(tmp_path / "empty.jsonl", [])
    summary = summarize_session(empty)
    assert summary is not None
    assert (summary.name, summary.first_message, summary.message_count) == (None, "", 0)
    os.mkfifo(tmp_path / "fifo.jsonl")
    assert summarize_session(tmp_path / "fifo.jsonl") is None  # never blocks on a FIFO


def test_lister_rereads_only_changed_files_and_sorts_newest_first(tmp_path: Path) -> None:
    older = _write(tmp_path / "a.jsonl", ENTRIES[:2])
    newer = _write(tmp_path / "b.jsonl", ENTRIES[:2])
    os.utime(older, (1_000, 1_000))
    os.utime(newer, (2_000, 2_000))
    lister = SessionLister()
    assert [s.path for s in lister.directory(tmp_path)] == [newer, older]
    with older.open("a", encoding="utf-8") as handle:
        handle.write(
            json.dumps({"type": "session_info", "id": "9", "parentId": "2", "name": "renamed"})
            + "\n"
        )
    os.utime(older, (3_000, 3_000))
    listed = lister.directory(tmp_path)
    assert [s.path for s in listed] == [older, newer]
    assert listed[0].name == "renamed"
    older.unlink()
    assert [s.path for s in lister.directory(tmp_path)] == [newer]


def test_everywhere_spans_project_directories_once(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    (root / "--a--").mkdir(parents=True)
    (root / "--b--").mkdir()
    one = _write(root / "--a--" / "one.jsonl", ENTRIES[:2])
    two = _write(root / "--b--" / "two.jsonl", ENTRIES[:2])
    found = SessionLister().everywhere([root, root / "--a--"])
    assert sorted(s.path for s in found) == sorted([one, two])
