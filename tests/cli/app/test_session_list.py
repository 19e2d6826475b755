"""The /resume picker's session lists are cached: only files that changed are read again."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pi_context.cli.app.session_list import SessionLister
from tests.helpers import write_session_in


def test_lister_rereads_only_changed_files_and_sorts_newest_first(tmp_path: Path) -> None:
    older = write_session_in(tmp_path, "a", messages=(("user", "q", 1),))
    newer = write_session_in(tmp_path, "b", messages=(("user", "q", 1),))
    os.utime(older, (1_000, 1_000))
    os.utime(newer, (2_000, 2_000))
    lister = SessionLister()
    assert [s.path for s in lister.directory(tmp_path)] == [newer, older]
    with older.open("a", encoding="utf-8") as handle:
        handle.write(
            json.dumps({"type": "session_info", "id": "9", "parentId": None, "name": "renamed"})
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
    one = write_session_in(root / "--a--", "one")
    two = write_session_in(root / "--b--", "two")
    found = SessionLister().everywhere([root, root / "--a--"])
    assert sorted(s.path for s in found) == sorted([one, two])
