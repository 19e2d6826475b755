"""Export the active branch as its own pi session file.

As pi's ``/export file.jsonl``: only the entries of the current branch, each ``parentId``
re-chained to the previous exported entry, under a fresh header that keeps the session id and
cwd but has no ``parentSession``. pi (and pictx) open the result like any session.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pi_context import _json
from pi_context.export.document import SessionDocument, export_target
from pi_context.session.entries import iso_now

__all__ = ["branch_lines", "default_jsonl_name", "export_jsonl"]


def default_jsonl_name(now_iso: str | None = None) -> str:
    """pi's default: ``session-<timestamp with : and . replaced by ->.jsonl``."""
    return "session-" + re.sub(r"[:.]", "-", now_iso or iso_now()) + ".jsonl"


def branch_lines(doc: SessionDocument, *, timestamp: str | None = None) -> list[bytes]:
    """The exported file's lines (without newlines): a fresh header, then the branch."""
    header: dict[str, Any] = {
        "type": "session",
        "version": 3,
        "id": doc.header.get("id"),
        "timestamp": timestamp or iso_now(),
        "cwd": doc.header.get("cwd"),
    }
    lines = [_json.dumps(header)]
    previous: str | None = None
    for entry in doc.active_path:
        if entry.get("parentId") != previous:
            entry = {**entry, "parentId": previous}
        lines.append(_json.dumps(entry))
        previous = str(entry["id"])
    return lines


def export_jsonl(doc: SessionDocument, out: str | Path) -> Path:
    """Write the active branch of ``doc`` to ``out`` as a session file; returns the path."""
    target = export_target(out)
    target.write_bytes(b"".join(line + b"\n" for line in branch_lines(doc)))
    return target
