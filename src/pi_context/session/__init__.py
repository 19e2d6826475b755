"""pi-compatible sessions: the JSONL file, the entry tree and the context projection.

::

    from pi_context.session import Session
    with Session.open("session.jsonl") as s:
        for message in s.projection().messages: ...
"""

from pi_context.session._live import PathView
from pi_context.session._reading import NotRegularFileError, open_regular, read_regular
from pi_context.session.codec import migrate_entries, scan_lines
from pi_context.session.entries import ENTRY_TYPES, UNREADABLE, Entry, make_entry
from pi_context.session.problems import LoadProblem, ProblemLog
from pi_context.session.projection import (
    ModelRef,
    ProjectedEntry,
    Projection,
    build_context_entries,
    context_edits_by_target,
    convert_to_llm,
    entry_messages,
    js_date_ms,
    project_entry,
    projection_of_path,
)
from pi_context.session.store import Session, new_entry_id, new_session_id
from pi_context.session.tree import TreeIndex

__all__ = [
    "ENTRY_TYPES",
    "UNREADABLE",
    "Entry",
    "LoadProblem",
    "ModelRef",
    "NotRegularFileError",
    "PathView",
    "ProblemLog",
    "ProjectedEntry",
    "Projection",
    "Session",
    "TreeIndex",
    "build_context_entries",
    "build_projection",
    "context_edits_by_target",
    "convert_to_llm",
    "entry_messages",
    "js_date_ms",
    "make_entry",
    "migrate_entries",
    "new_entry_id",
    "new_session_id",
    "open_regular",
    "project_entry",
    "projection_of_path",
    "read_regular",
    "scan_lines",
]


def build_projection(entries: "list[Entry] | TreeIndex", leaf_id: str | None) -> Projection:
    """pi's ``buildSessionProjection(entries, leafId)``: ``None`` gives an empty projection.

    Unlike pi (which falls back to the last entry), an unknown ``leaf_id`` raises
    :class:`~pi_context.errors.TreeError`.
    """
    tree = entries if isinstance(entries, TreeIndex) else TreeIndex(entries)
    if leaf_id is None:
        return projection_of_path([])
    return projection_of_path(tree.path(tree.require(leaf_id)))
