"""The read-only path view shared with the live projection, and the live projection of
entries read back from a file."""

from __future__ import annotations

import tempfile
from pathlib import Path
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.session import Session, projection_of_path
from pi_context.session._live import PathView
from pi_context.session._load import columns
from pi_context.session.entries import Entry
from pi_context.testing import FixedClock, SequentialIds
from tests.jsonview import as_json
from tests.session.helpers import SESSION_OPS, apply_op, reference_projection, user


def _entries(n: int) -> list[Entry]:
    return [
        Entry.from_data({"type": "custom", "id": f"{i:08x}", "parentId": None}) for i in range(n)
    ]


@given(st.integers(0, 12), st.integers(0, 4), st.data())
def test_path_view_reads_like_the_prefix_list(length: int, grown: int, data: st.DataObject) -> None:
    items = _entries(length)
    view = PathView(items)
    prefix = list(items)
    items.extend(_entries(length + grown)[length:])  # the live path grows after the view
    assert len(view) == length
    assert list(view) == prefix
    assert list(reversed(view)) == prefix[::-1]
    index = data.draw(st.integers(-length, length - 1)) if length else None
    if index is not None:
        assert view[index] is prefix[index]
    cut = data.draw(st.slices(length))
    assert view[cut] == prefix[cut]


@settings(max_examples=40, deadline=None)
@given(SESSION_OPS, SESSION_OPS)
def test_a_reopened_session_projects_as_a_full_walk_with_few_entries_kept(
    before: list[tuple[str, int]], after: list[tuple[str, int]]
) -> None:
    """Entries read back from the file (columns, objects made on access) and a context that
    keeps only its newest projected entry give the projection of a full walk, before and after
    further appends (edits, compactions, leaf moves)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.jsonl"
        s = Session.create(path, cwd="/", ids=SequentialIds(), clock=FixedClock())
        s.append_message(user("first"))
        for op, n in before:
            apply_op(s, op, n)
        s.close()
        with (
            mock.patch("pi_context.session._live.KEEP_ITEMS", 1),
            mock.patch.object(columns, "RECENT_ENTRIES", 1),
        ):
            reopened = Session.open(path, ids=SequentialIds(start=10_000), clock=FixedClock())
            views = []
            for op, n in [("user", 0), *after]:
                live = reopened.stored_projection()
                views.append((live, as_json(list(live.messages))))
                scratch = projection_of_path(reopened.branch_entries())
                assert list(live.messages) == list(scratch.messages)
                assert len(live.messages) == len(scratch.messages)
                assert [p.entry.id for p in live.entries] == [p.entry.id for p in scratch.entries]
                assert [list(p.messages) for p in live.entries] == [
                    list(p.messages) for p in scratch.entries
                ]
                assert (live.thinking_level, live.model) == (scratch.thinking_level, scratch.model)
                ids, messages, level, model = reference_projection(reopened.branch_entries())
                assert [p.entry.id for p in live.entries] == ids
                assert list(live.messages) == messages
                assert (live.thinking_level, live.model) == (level, model)
                apply_op(reopened, op, n)
            for view, seen in views:  # a projection taken earlier shows what it showed
                assert as_json(list(view.messages)) == seen
            reopened.close()
