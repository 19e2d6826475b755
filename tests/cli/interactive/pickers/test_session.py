"""The /resume picker: scope, sort modes, filters, rename and delete (without a terminal)."""

from __future__ import annotations

from pathlib import Path

from pi_context.cli.interactive.pickers.list import AskText, Close, Confirm, Stay
from pi_context.cli.interactive.pickers.session import SessionPicker, format_age, thread_order
from pi_context.session_dirs import SessionInfo


def _session(
    name: str, modified: float, *, parent: str | None = None, title: str | None = None
) -> SessionInfo:
    return SessionInfo(
        path=Path(f"/s/{name}.jsonl"),
        id=name,
        cwd="/proj",
        created="",
        modified=modified,
        name=title,
        first_message=f"question {name}",
        message_count=2,
        parent_session=parent,
    )


ROOT = _session("root", 100)
FORK = _session("fork", 300, parent="/s/root.jsonl")
FORK2 = _session("fork2", 150, parent="/s/root.jsonl")
OTHER = _session("other", 200, title="Named one")
ELSEWHERE = _session("elsewhere", 50)


class Actions:
    def __init__(self) -> None:
        self.renamed: list[tuple[str, str]] = []
        self.deleted: list[str] = []

    def rename(self, session: SessionInfo, name: str) -> None:
        self.renamed.append((session.id, name))

    def delete(self, session: SessionInfo) -> None:
        self.deleted.append(session.id)


def _picker(actions: Actions | None = None) -> SessionPicker:
    actions = actions or Actions()
    here = [FORK, OTHER, FORK2, ROOT]  # newest first, as listed
    return SessionPicker(
        here=lambda: list(here),
        everywhere=lambda: [*here, ELSEWHERE],
        current=OTHER.path,
        rename=actions.rename,
        delete=actions.delete,
        clock=lambda: 400.0,
    )


def _ids(picker: SessionPicker, query: str = "") -> list[str]:
    return [row.value.id for row in picker.rows(query)]


def test_threaded_puts_forks_under_their_session_newest_thread_first() -> None:
    order = [(s.id, depth) for s, depth in thread_order([FORK, OTHER, FORK2, ROOT])]
    assert order == [("root", 0), ("fork", 1), ("fork2", 1), ("other", 0)]
    loop_a = _session("a", 1, parent="/s/b.jsonl")
    loop_b = _session("b", 2, parent="/s/a.jsonl")
    assert sorted(s.id for s, _ in thread_order([loop_a, loop_b])) == ["a", "b"]


def test_sort_cycles_threaded_recent_relevance() -> None:
    picker = _picker()
    assert picker.title() == "Resume Session (Current Folder) · sort: threaded"
    assert _ids(picker) == ["root", "fork", "fork2", "other"]
    sort = next(k for k in picker.bindings() if k.label == "Ctrl+S")
    assert sort.action(None, "") == Stay("Sort: recent")
    assert _ids(picker) == ["fork", "other", "fork2", "root"]
    assert sort.action(None, "") == Stay("Sort: relevance")
    assert _ids(picker, "fork2") == ["fork2"]
    assert _ids(picker, "question fork")[:2] == ["fork", "fork2"]
    sort.action(None, "")
    assert picker.sort == "threaded"


def test_rows_show_title_count_age_and_the_current_session() -> None:
    picker = _picker()
    rows = {row.value.id: row for row in picker.rows("")}
    assert rows["other"].text == "Named one"
    assert rows["other"].note == "2 msgs · 3m · current"
    assert rows["fork"].text == "└ question fork"
    path = next(k for k in picker.bindings() if k.label == "Ctrl+P")
    path.action(None, "")
    assert picker.rows("")[0].note.endswith("/s/root.jsonl")


def test_tab_lists_every_project_and_ctrl_n_only_named_sessions() -> None:
    picker = _picker()
    keys = {k.label: k for k in picker.bindings()}
    keys["Tab"].action(None, "")
    assert picker.title().startswith("Resume Session (All)")
    assert "elsewhere" in _ids(picker)
    assert picker.rows("")[0].note.endswith("/proj")  # all projects: the folder is shown
    keys["Ctrl+N"].action(None, "")
    assert _ids(picker) == ["other"]


def test_rename_asks_for_a_name_and_ignores_a_blank_one() -> None:
    actions = Actions()
    picker = _picker(actions)
    rename = next(k for k in picker.bindings() if k.label == "Ctrl+R")
    asked = rename.action(OTHER, "")
    assert isinstance(asked, AskText)
    assert asked.default == "Named one"
    assert asked.then("  ") == Stay("Name unchanged")
    assert asked.then(" Better name ") == Stay("Renamed to Better name")
    assert actions.renamed == [("other", "Better name")]


def test_delete_confirms_and_never_deletes_the_session_in_use() -> None:
    actions = Actions()
    picker = _picker(actions)
    delete = next(k for k in picker.bindings() if k.label == "Ctrl+D")
    assert delete.action(OTHER, "") == Stay("The session in use cannot be deleted")
    asked = delete.action(ROOT, "")
    assert isinstance(asked, Confirm)
    assert "question root" in asked.question
    assert actions.deleted == []
    assert asked.then() == Stay("Session deleted")
    assert actions.deleted == ["root"]


def test_enter_resumes() -> None:
    assert _picker().choose(ROOT, "") == Close(ROOT)


def test_format_age() -> None:
    assert [format_age(s) for s in (5, 120, 7200, 3 * 86400, 30 * 86400, -4)] == [
        "now",
        "2m",
        "2h",
        "3d",
        "4w",
        "now",
    ]
