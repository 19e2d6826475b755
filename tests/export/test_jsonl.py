"""JSONL export: the active branch as its own session file."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pi_context.export import SessionDocument, default_jsonl_name, export_file
from pi_context.session_dirs import read_header
from tests.export import sessions


def test_branch_only_rechained_fresh_header(tmp_path: Path) -> None:
    source = sessions.write(tmp_path / "s.jsonl")
    doc = SessionDocument.load(source)
    doc.header["parentSession"] = "/elsewhere/x.jsonl"
    out = export_file(doc, "branch.jsonl", cwd=tmp_path)
    assert out == tmp_path / "branch.jsonl"
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    header = read_header(out)
    assert header is not None
    assert list(header) == ["type", "version", "id", "timestamp", "cwd"]
    assert header["id"] == sessions.HEADER["id"]
    ids = [e["id"] for e in lines[1:]]
    assert ids == [e["id"] for e in doc.active_path]
    assert "b0000001" not in ids
    assert [e["parentId"] for e in lines[1:]] == [None, *ids[:-1]]
    # entries other than parentId are unchanged
    by_id = {e["id"]: e for e in sessions.entries()}
    assert lines[3] == by_id[lines[3]["id"]]


def test_export_reloads_with_same_leaf(tmp_path: Path) -> None:
    doc = SessionDocument.load(sessions.write(tmp_path / "s.jsonl"))
    again = SessionDocument.load(export_file(doc, tmp_path / "b.jsonl"))
    assert again.leaf_id == doc.leaf_id
    assert [e["id"] for e in again.active_path] == [e["id"] for e in doc.active_path]


def test_default_name() -> None:
    assert (
        default_jsonl_name("2026-01-05T10:00:00.000Z") == "session-2026-01-05T10-00-00-000Z.jsonl"
    )
    assert re.fullmatch(
        r"session-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z\.jsonl", default_jsonl_name()
    )
