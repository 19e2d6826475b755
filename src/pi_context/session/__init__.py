"""pi-compatible sessions: the JSONL file, the entry tree and the context projection.

::

    from pi_context.session import Session
    with Session.open("session.jsonl") as s:
        for message in s.projection().messages: ...
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_context import _lazy

if TYPE_CHECKING:
    from pi_context.session._live import PathView
    from pi_context.session.codec import (
        LoadProblem,
    )
    from pi_context.session.entries import ENTRY_TYPES, Entry, make_entry
    from pi_context.session.entry_store import EntryStore, EntryTree
    from pi_context.session.projection import (
        ModelRef,
        ProjectedEntry,
        Projection,
        convert_to_llm,
        projection_of_path,
    )
    from pi_context.session.search import SearchHit
    from pi_context.session.search_index import SearchIndex
    from pi_context.session.store import Session, new_entry_id, new_session_id
    from pi_context.session.tree import TreeIndex

__all__ = [
    "ENTRY_TYPES",
    "Entry",
    "EntryStore",
    "EntryTree",
    "LoadProblem",
    "ModelRef",
    "PathView",
    "ProjectedEntry",
    "Projection",
    "SearchHit",
    "SearchIndex",
    "Session",
    "TreeIndex",
    "build_projection",
    "convert_to_llm",
    "make_entry",
    "new_entry_id",
    "new_session_id",
    "projection_of_path",
]

_HOMES = _lazy.homes(
    {
        "pi_context.session._live": ("PathView",),
        "pi_context.session.codec": ("LoadProblem",),
        "pi_context.session.entries": (
            "ENTRY_TYPES",
            "Entry",
            "make_entry",
        ),
        "pi_context.session.entry_store": ("EntryStore", "EntryTree"),
        "pi_context.session.projection": (
            "ModelRef",
            "ProjectedEntry",
            "Projection",
            "convert_to_llm",
            "projection_of_path",
        ),
        "pi_context.session.search": ("SearchHit",),
        "pi_context.session.search_index": ("SearchIndex",),
        "pi_context.session.store": (
            "Session",
            "new_entry_id",
            "new_session_id",
        ),
        "pi_context.session.tree": ("TreeIndex",),
    }
)
"""Where each public name lives; imported from there when first used."""

__getattr__, __dir__ = _lazy.hooks(globals(), _HOMES, __all__)


def build_projection(entries: list[Entry] | TreeIndex, leaf_id: str | None) -> Projection:
    """pi's ``buildSessionProjection(entries, leafId)``: ``None`` gives an empty projection.

    Unlike pi (which falls back to the last entry), an unknown ``leaf_id`` raises
    :class:`~pi_context.errors.TreeError`.
    """
    from pi_context.session.projection import projection_of_path
    from pi_context.session.tree import TreeIndex

    tree = entries if isinstance(entries, TreeIndex) else TreeIndex(entries)
    if leaf_id is None:
        return projection_of_path([])
    return projection_of_path(tree.path(tree.require(leaf_id)))
