"""The read-only path view shared with the live projection."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pi_context.session._live import PathView
from pi_context.session.entries import Entry


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
