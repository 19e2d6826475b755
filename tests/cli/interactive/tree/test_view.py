"""The ``/tree`` selector's view model on real session files built with the store API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_context.cli.interactive.tree.view import (
    FILTERS,
    TreeView,
    entry_text,
    searchable_text,
    tree_filter_setting,
    visible_height,
)
from pi_context.export import SessionDocument
from tests.cli.interactive.tree.helpers import Built, raw_reply, session_at
from tests.hostile.helpers import raw_user


@pytest.fixture
def built(tmp_path: Path) -> Built:
    return Built(tmp_path)


def _ids(view: TreeView) -> list[str]:
    return [row.entry_id for row in view.rows]


def test_default_filter_hides_metadata_and_text_free_assistant_messages(built: Built) -> None:
    view = built.view()
    # the label entry is now the leaf; it is hidden by the default filter, so its nearest
    # visible ancestor (the last answer) is selected
    assert built.session.leaf_id == built.label
    assert _ids(view) == [
        built.u1,
        built.r1,
        built.a2,
        built.u4,
        built.a5,
        built.u2,
        built.a3,
        built.u3,
        built.a4,
    ]
    assert built.a1 not in _ids(view)  # only a tool call: hidden
    assert view.selected_id == built.a4


def test_rows_draw_branches_path_and_labels(built: Built) -> None:
    rows = {row.entry_id: row for row in built.view().rows}
    assert rows[built.u1].prefix == "• "
    assert rows[built.u1].text == "user: list the files"
    assert rows[built.r1].text == "[bash: ls -a]"
    assert rows[built.u4].prefix == "├─ "  # off the current branch: no dot
    assert rows[built.a5].prefix == "│  "
    assert rows[built.u2].prefix == "└─ • "
    assert rows[built.u2].label == "readme"
    assert rows[built.a3].prefix == "   • "
    assert not rows[built.u4].on_path
    assert rows[built.u2].label_time == "2026-01-01 00:14"


def test_the_leaf_shows_even_without_text_and_errors_always_show(tmp_path: Path) -> None:
    session = session_at(tmp_path / "s.jsonl")
    session.append_message(raw_user("go"))
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}}
    failed = session.append_message(raw_reply(stopReason="error", errorMessage="overloaded")).id
    session.move_leaf(session.entries[0].id)
    leaf = session.append_message(raw_reply(calls=[call])).id
    doc = SessionDocument.from_entries(
        session.header, [e.data for e in session.entries], session.leaf_id
    )
    rows = {row.entry_id: row for row in TreeView(doc).rows}
    assert rows[leaf].is_leaf
    assert rows[leaf].text == "assistant: → read"
    assert rows[failed].text == "assistant: (error) overloaded"


def test_usage_entries_never_show(tmp_path: Path) -> None:
    session = session_at(tmp_path / "s.jsonl")
    first = session.append_message(raw_user("hi")).id
    usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}
    session.append_usage("cache_warm", "p", "m", usage)
    doc = SessionDocument.from_entries(
        session.header, [e.data for e in session.entries], session.leaf_id
    )
    view = TreeView(doc, filter_mode="all")
    assert _ids(view) == [first]
    assert view.selected_id == first  # the hidden leaf's nearest visible ancestor


def test_each_filter(built: Built) -> None:
    view = built.view()
    view.set_filter("no-tools")
    assert built.r1 not in _ids(view)
    assert built.a2 in _ids(view)
    view.set_filter("user-only")
    assert _ids(view) == [built.u1, built.u4, built.u2, built.u3]
    view.set_filter("labeled-only")
    assert _ids(view) == [built.u2]
    view.set_filter("all")
    every = _ids(view)
    assert built.label in every
    assert built.session.entries[0].id in every  # the model change
    assert built.a1 not in every  # always hidden (no text, not the leaf)
    rows = {row.entry_id: row for row in view.rows}
    assert rows[built.session.entries[1].id].text == "thinking: high"
    assert rows[built.label].text.startswith("label: ")


def test_filter_keys_toggle_and_cycle(built: Built) -> None:
    view = built.view()
    view.toggle_no_tools()
    assert view.filter_mode == "no-tools"
    view.toggle_no_tools()
    assert view.filter_mode == "default"
    seen = []
    for _ in FILTERS:
        view.cycle_filter()
        seen.append(view.filter_mode)
    assert seen == ["no-tools", "user-only", "labeled-only", "all", "default"]
    view.cycle_filter(forward=False)
    assert view.filter_mode == "all"
    with pytest.raises(ValueError, match="unknown tree filter"):
        view.set_filter("everything")


def test_filter_setting_and_height() -> None:
    assert tree_filter_setting({"treeFilterMode": "user-only"}) == "user-only"
    assert tree_filter_setting({"treeFilterMode": "bogus"}) == "default"
    assert tree_filter_setting(None) == "default"
    assert visible_height(40) == 20
    assert visible_height(7) == 5


def test_initial_filter_comes_from_the_caller(built: Built) -> None:
    view = built.view(filter_mode="user-only")
    assert view.selected_id == built.u3  # the leaf's nearest visible ancestor


def test_search_tokens_must_all_occur_case_insensitive(built: Built) -> None:
    view = built.view()
    view.type("README")
    assert _ids(view) == [built.r1, built.u2]  # the tool output; the text (and the label)
    view.type(" expl")
    assert _ids(view) == [built.u2]
    view.backspace()
    view.backspace()
    view.backspace()
    view.backspace()
    assert view.query == "README "
    assert view.clear_search()
    assert not view.clear_search()
    assert len(_ids(view)) == 9


def test_searchable_text_covers_labels_kinds_and_commands(built: Built) -> None:
    doc = built.doc()
    by_id = doc.by_id
    assert "readme" in searchable_text(by_id[built.u2], "readme")
    assert "model p/m" in searchable_text(doc.entries[0])
    assert "thinking high" in searchable_text(doc.entries[1])
    view = built.view(filter_mode="all")
    view.type("model")
    assert _ids(view) == [doc.entries[0]["id"]]
    view.clear_search()
    view.type("thinking high")
    assert _ids(view) == [doc.entries[1]["id"]]


def test_search_finds_compactions_and_branch_summaries(tmp_path: Path) -> None:
    session = session_at(tmp_path / "s.jsonl")
    first = session.append_message(raw_user("start")).id
    session.append_message(raw_reply("ok"))
    compaction = session.append_compaction("SUMMARY of the start", first, 1000).id
    summary = session.append_branch_summary(first, "tried the other way", parent_id=first).id
    doc = SessionDocument.from_entries(
        session.header, [e.data for e in session.entries], session.leaf_id
    )
    view = TreeView(doc)
    view.type("compaction")
    assert _ids(view) == [compaction]
    view.clear_search()
    view.type("branch summary other")
    assert _ids(view) == [summary]


def test_up_down_wrap_and_paging_stops_at_the_ends(built: Built) -> None:
    view = built.view(height=3)
    assert view.selected_index == 8  # the last row
    view.move(1)
    assert view.selected_id == built.u1  # wrapped
    view.move(-1)
    assert view.selected_id == built.a4  # and back
    view.page(-1)
    assert view.selected_index == 8 - 3
    view.page(-1)
    view.page(-1)
    assert view.selected_index == 0
    view.page(1)
    assert view.selected_index == 3
    view.page(1)
    view.page(1)
    assert view.selected_index == 8


def test_window_keeps_the_selection_visible(built: Built) -> None:
    view = built.view(height=4)
    start, rows = view.window()
    assert len(rows) == 4
    assert any(row.selected for row in rows)
    view.move(-view.selected_index if view.selected_index else 0)
    start, rows = view.window()
    assert start == 0
    assert rows[0].selected


def test_fold_unfold_and_jump_between_segment_starts(built: Built) -> None:
    view = built.view()
    assert view.selected_id == built.a4
    view.fold_or_previous()  # inside a segment: jump to its start
    assert view.selected_id == built.u2
    view.fold_or_previous()  # a segment start with children: fold it
    row = next(r for r in view.rows if r.entry_id == built.u2)
    assert row.folded
    assert row.prefix == "└⊞ • "
    assert built.a3 not in _ids(view)
    view.fold_or_previous()  # already folded: jump to the segment it branched from
    assert view.selected_id == built.u1
    view.unfold_or_next()  # not folded: jump to the next segment start below
    assert view.selected_id == built.u4
    view.unfold_or_next()
    assert view.selected_id == built.u2
    view.unfold_or_next()  # folded: unfold
    assert built.a3 in _ids(view)
    view.fold_or_previous()
    view.move(-(view.selected_index or 0))
    view.fold_or_previous()  # the root folds
    assert _ids(view) == [built.u1]
    assert view.rows[0].prefix == "⊞ • "
    view.unfold_or_next()
    assert built.u4 in _ids(view)
    assert built.a3 not in _ids(view)  # the nested fold is kept
    view.move(-1)
    assert view.selected_id == built.u2  # the last row
    view.unfold_or_next()
    view.move(1)
    view.move(1)
    view.move(1)
    assert view.selected_id == built.a4
    view.unfold_or_next()  # no segment start below: stays
    assert view.selected_id == built.a4


def test_changing_the_search_or_filter_unfolds_everything(built: Built) -> None:
    view = built.view()
    view.move(-(view.selected_index or 0))
    view.fold_or_previous()
    assert len(view.rows) == 1
    view.set_filter("default")
    assert len(view.rows) == 9
    view.fold_or_previous()
    view.type("x")
    view.backspace()
    assert len(view.rows) == 9


def test_reload_keeps_selection_and_shows_a_new_label(built: Built) -> None:
    view = built.view()
    view.move(-5)
    chosen = view.selected_id
    assert chosen is not None
    built.session.append_label(chosen, "here")
    view.reload(built.doc())
    assert view.selected_id == chosen
    assert view.row(view.selected_index or 0).label == "here"
    view.toggle_label_times()
    assert view.show_label_times


def test_entry_text_is_the_whole_text(built: Built) -> None:
    by_id = built.doc().by_id
    assert entry_text(by_id[built.u1]) == "list the files"
    assert entry_text(by_id[built.r1]) == "README\nsetup.py"
    assert entry_text(by_id[built.a3]) == "It describes the project"


def test_an_empty_session_has_no_rows(tmp_path: Path) -> None:
    session = session_at(tmp_path / "s.jsonl")
    doc = SessionDocument.from_entries(session.header, [], None)
    view = TreeView(doc)
    assert view.is_empty
    assert view.rows == []
    assert view.selected_id is None
    view.move(1)
    view.page(1)
    view.fold_or_previous()
    view.unfold_or_next()
    assert view.window() == (0, [])


def test_a_long_linear_session_needs_no_recursion(tmp_path: Path) -> None:
    entries = [
        {
            "type": "message",
            "id": f"m{n}",
            "parentId": f"m{n - 1}" if n else None,
            "timestamp": "t",
            "message": raw_user(f"message {n}"),
        }
        for n in range(5000)
    ]
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}
    view = TreeView(SessionDocument.from_entries(header, entries, "m4999"), height=20)
    assert view.row_count == 5000
    assert view.selected_index == 4999
    start, rows = view.window()
    assert start == 4980
    assert rows[-1].is_leaf


def test_indentation_of_deeply_nested_branches_is_bounded() -> None:
    # every entry has two children: one continues, one is a dead end (a hostile comb)
    entries: list[dict[str, Any]] = []
    parent = None
    for n in range(2000):
        main, side = f"m{n}", f"s{n}"
        for eid in (main, side):
            entries.append(
                {
                    "type": "message",
                    "id": eid,
                    "parentId": parent,
                    "timestamp": "t",
                    "message": raw_user(eid),
                }
            )
        parent = main
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}
    view = TreeView(SessionDocument.from_entries(header, entries, "m1999"))
    assert view.row_count == 4000
    assert max(len(row.prefix) for row in view.rows) <= 100
