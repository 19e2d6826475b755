"""``@`` file references and Tab path completion: the word being completed, the matching and
ranking of the ``@`` list, the ignore rules, quoting, Tab's directory listing, and the walk's
cache and bounds."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from pi_context.cli.interactive.completion import (
    MAX_FILE_SUGGESTIONS,
    EditorCompleter,
    FileCompletion,
    FileIndex,
    IndexedEntry,
    at_prefix,
    collation_key,
    file_suggestions,
    path_prefix,
    path_suggestions,
    rank_entries,
)


def _tree(root: Path, *paths: str) -> Path:
    """Files (and directories, ending with ``/``) below ``root``."""
    for path in paths:
        target = root / path
        if path.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("x", encoding="utf-8")
    return root


def _values(prefix: str, cwd: Path, index: FileIndex | None = None) -> list[str]:
    return [s.value for s in file_suggestions(prefix, cwd, index or FileIndex())]


# -- the word being completed --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("@", "@"),
        ("look at @src/ma", "@src/ma"),
        ("(@notes", "@notes"),
        ("`@src/x", "@src/x"),
        ("x=@a", "@a"),
        ('see @"my fi', '@"my fi'),
        ("mail me@example", None),
        ("plain words", None),
        ('@"done" next', None),
        ("文件：@src", "@src"),
    ],
)
def test_the_at_reference_is_the_word_that_starts_with_at(text: str, expected: str | None) -> None:
    assert at_prefix(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("!cat ./sr", "./sr"),
        ("open ~/no", "~/no"),
        ("ls /et", "/et"),
        ("", ""),
        ("word ", ""),
        ('cat "my di', '"my di'),
        ("(src/ma", "src/ma"),
        ("app/[id]/pa", "app/[id]/pa"),
    ],
)
def test_tab_completes_the_word_before_the_cursor(text: str, expected: str) -> None:
    assert path_prefix(text) == expected


# -- ranking -------------------------------------------------------------------------------------


def _entries(*paths: str) -> list[IndexedEntry]:
    return [IndexedEntry(p.rstrip("/"), p.endswith("/")) for p in paths]


def test_ranking_order_in_detail() -> None:
    entries = _entries("lib/xmain.py", "main/", "a/b/main", "src/main.py", "mainly/", "x/mainly/")
    ranked = [e.relative for e in rank_entries(entries, "main")]
    assert ranked == [
        "main",  # exact name, directory: 110
        "a/b/main",  # exact name, file: 100
        "mainly",  # name starts with it, directory: 90
        "x/mainly",  # the same, deeper
        "src/main.py",  # name starts with it, file: 80
        "lib/xmain.py",  # name contains it: 50
    ]


def test_ties_go_to_the_shallower_then_the_shorter_path() -> None:
    entries = _entries("deep/er/notes.md", "notes.markdown", "notes.md", "z/notes.md")
    assert [e.relative for e in rank_entries(entries, "notes")] == [
        "notes.md",
        "notes.markdown",
        "z/notes.md",
        "deep/er/notes.md",
    ]


def test_a_query_with_an_uppercase_letter_is_case_sensitive() -> None:
    entries = _entries("README.md", "readme.txt", "docs/Readme.rst")
    assert [e.relative for e in rank_entries(entries, "read")] == [
        "README.md",
        "readme.txt",
        "docs/Readme.rst",
    ]
    assert [e.relative for e in rank_entries(entries, "Read")] == ["docs/Readme.rst"]


def test_a_query_with_a_slash_matches_the_path() -> None:
    entries = _entries("src/app/main.py", "test/app/main.py", "src/other.py")
    assert [e.relative for e in rank_entries(entries, "src/app")] == ["src/app/main.py"]


def test_an_empty_query_lists_the_shallowest_first() -> None:
    entries = _entries("b/c/d.txt", "zz.txt", "a/", "a/b.txt")
    assert [e.relative for e in rank_entries(entries, "")] == [
        "a",
        "zz.txt",
        "a/b.txt",
        "b/c/d.txt",
    ]


def test_at_most_twenty_are_offered() -> None:
    entries = _entries(*(f"file{n:03}.txt" for n in range(100)))
    ranked = rank_entries(entries, "file")
    assert len(ranked) == MAX_FILE_SUGGESTIONS == 20
    assert ranked[0].relative == "file000.txt"


# -- the tree: ignore rules, quoting, scopes -----------------------------------------------------


def test_the_list_skips_git_and_ignored_entries_and_keeps_hidden_ones(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        ".git/config",
        ".gitignore",
        "node_modules/pkg/config.js",
        "build/config.out",
        ".config.toml",
        "src/config.py",
    )
    (tmp_path / ".gitignore").write_text("node_modules/\nbuild/\n", encoding="utf-8")
    # the name starting with the query ranks above the name containing it
    assert _values("@config", tmp_path) == ["@src/config.py", "@.config.toml"]
    assert _values("@node_mod", tmp_path) == []


def test_a_path_with_a_space_is_quoted_and_a_directory_stays_open(tmp_path: Path) -> None:
    _tree(tmp_path, "my notes/todo list.md", "plain/")
    found = {s.label: s for s in file_suggestions("@", tmp_path, FileIndex())}
    assert found["todo list.md"].value == '@"my notes/todo list.md"'
    assert found["my notes/"].value == '@"my notes/'  # the closing quote comes with a file
    assert found["plain/"].value == "@plain/"
    assert found["todo list.md"].description == "my notes/todo list.md"
    # a reference opened with @" stays quoted
    assert _values('@"pla', tmp_path) == ['@"plain/']


def test_a_query_below_an_existing_directory_searches_there(tmp_path: Path) -> None:
    _tree(tmp_path, "src/main.py", "src/lib/main_util.py", "other/main.py")
    assert _values("@src/ma", tmp_path) == ["@src/main.py", "@src/lib/main_util.py"]
    home = _tree(tmp_path / "home", "notes/main.txt")
    assert _values(f"@{home}/notes/ma", tmp_path) == [f"@{home}/notes/main.txt"]


def test_a_query_below_the_home_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path / "home", "notes/plan.md")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert _values("@~/notes/pl", tmp_path / "elsewhere") == ["@~/notes/plan.md"]


def test_the_completion_adds_a_space_after_a_file_only(tmp_path: Path) -> None:
    _tree(tmp_path, "docs/guide.md")
    completer = EditorCompleter(_NoCommands(), lambda: tmp_path)
    texts = [c.text for c in _complete(completer, "read @gui")]
    assert texts == ["@docs/guide.md "]
    texts = [c.text for c in _complete(completer, "read @doc")]
    assert texts == ["@docs/"]


def test_names_are_shown_with_control_characters_visible(tmp_path: Path) -> None:
    if sys.platform == "win32":
        pytest.skip("such names need a POSIX file system")
    (tmp_path / "evil\x1b]0;title\x07.txt").write_text("x", encoding="utf-8")
    (completion,) = _complete(EditorCompleter(_NoCommands(), lambda: tmp_path), "@evil")
    shown = completion.display_text + completion.display_meta_text
    assert "\x1b" not in shown
    assert "\x07" not in shown
    assert "␛]0;title␇.txt" in completion.display_text


# -- Tab -----------------------------------------------------------------------------------------


def test_tab_lists_directories_first_and_matches_any_case(tmp_path: Path) -> None:
    _tree(tmp_path, "Src/", "scripts/", "setup.py", "SConstruct", "other.txt", ".secret")
    labels = [s.label for s in path_suggestions("s", tmp_path)]
    assert labels == ["scripts/", "Src/", "SConstruct", "setup.py"]
    assert [s.value for s in path_suggestions("./Sc", tmp_path)] == ["./scripts/", "./SConstruct"]
    assert ".secret" in [s.label for s in path_suggestions("", tmp_path)]


def test_tab_keeps_the_home_and_absolute_forms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path / "home", "projects/")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert [s.value for s in path_suggestions("~/pro", tmp_path)] == ["~/projects/"]
    assert [s.value for s in path_suggestions(f"{tmp_path}/ho", tmp_path)] == [f"{tmp_path}/home/"]
    assert [s.value for s in path_suggestions("src/../hom", tmp_path)] == ["home/"]


def test_tab_quotes_a_path_with_a_space(tmp_path: Path) -> None:
    _tree(tmp_path, "my file.txt")
    assert [s.value for s in path_suggestions("my", tmp_path)] == ['"my file.txt"']


def test_tab_in_a_missing_directory_offers_nothing(tmp_path: Path) -> None:
    assert path_suggestions("nowhere/x", tmp_path) == []


class _NoCommands(Completer):
    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        yield Completion("/help", start_position=-len(document.text_before_cursor))


def _complete(completer: Completer, text: str, *, tab: bool = False) -> list[Completion]:
    event = CompleteEvent(completion_requested=tab, text_inserted=not tab)
    return list(completer.get_completions(Document(text), event))


def test_paths_complete_on_tab_only_and_commands_at_the_start(tmp_path: Path) -> None:
    _tree(tmp_path, "src/app.py")
    completer = EditorCompleter(_NoCommands(), lambda: tmp_path)
    assert _complete(completer, "!cat ./sr") == []  # typing: no list outside @
    (tab,) = _complete(completer, "!cat ./sr", tab=True)
    assert isinstance(tab, FileCompletion)
    assert (tab.text, tab.start_position) == ("./src/", -4)
    assert [c.text for c in _complete(completer, "/he")] == ["/help"]
    assert [c.text for c in _complete(completer, "/he", tab=True)] == ["/help"]
    # a slash command's argument is a path like any other word
    assert [c.text for c in _complete(completer, "/export sr", tab=True)] == ["src/"]


async def test_the_walk_runs_off_the_editors_thread(tmp_path: Path) -> None:
    _tree(tmp_path, "a.txt")
    completer = EditorCompleter(_NoCommands(), lambda: tmp_path)
    event = CompleteEvent(text_inserted=True)
    found = [c.text async for c in completer.get_completions_async(Document("@a"), event)]
    assert found == ["@a.txt "]
    found = [c.text async for c in completer.get_completions_async(Document("/h"), event)]
    assert found == ["/help"]


# -- the walk: cache and bounds ------------------------------------------------------------------


def test_a_walk_is_reused_until_it_is_stale(tmp_path: Path) -> None:
    _tree(tmp_path, "one.txt")
    now = [0.0]
    index = FileIndex(ttl=5.0, clock=lambda: now[0])
    assert _values("@", tmp_path, index) == ["@one.txt"]
    _tree(tmp_path, "two.txt")
    now[0] = 4.0
    assert _values("@", tmp_path, index) == ["@one.txt"]
    assert index.walk_count == 1
    now[0] = 9.5
    assert _values("@", tmp_path, index) == ["@one.txt", "@two.txt"]
    assert index.walk_count == 2


def test_a_slow_walk_is_redone_in_the_background_while_the_old_list_serves(
    tmp_path: Path,
) -> None:
    _tree(tmp_path, "one.txt")
    now = [0.0]
    index = FileIndex(ttl=5.0, slow=0.0, clock=lambda: now[0])  # every walk counts as slow
    assert _values("@", tmp_path, index) == ["@one.txt"]
    _tree(tmp_path, "two.txt")
    now[0] = 6.0
    assert _values("@", tmp_path, index) == ["@one.txt"]  # stale, served at once
    index.wait()
    assert _values("@", tmp_path, index) == ["@one.txt", "@two.txt"]
    assert index.walk_count == 2


def test_a_walk_stops_at_its_limit(tmp_path: Path) -> None:
    _tree(tmp_path, *(f"d{n}/f{m}.txt" for n in range(5) for m in range(10)))
    index = FileIndex(limit=12)
    assert len(index.entries(tmp_path)) == 12


@pytest.mark.skipif(not hasattr(os, "symlink") or sys.platform == "win32", reason="POSIX links")
def test_a_link_loop_neither_hangs_nor_is_followed(tmp_path: Path) -> None:
    _tree(tmp_path, "real/inside.txt")
    (tmp_path / "real" / "back").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "self").symlink_to(tmp_path / "self")  # a link to itself: broken
    entries = {e.relative: e.is_dir for e in FileIndex().entries(tmp_path)}
    assert entries == {"real": True, "real/back": True, "real/inside.txt": False, "self": False}


def test_an_unreadable_directory_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path, "locked/secret.txt", "open.txt")
    real_scandir = os.scandir

    def scandir(path: str | os.PathLike[str]) -> object:
        if Path(path).name == "locked":  # as a directory without read permission answers
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert [e.relative for e in FileIndex().entries(tmp_path)] == ["locked", "open.txt"]


def test_names_are_ordered_as_javascripts_locale_compare_orders_them() -> None:
    names = ["main_test.py", "main.py", "Main.py", "main.PY", "a-b", "a_b", "ab", "a b", "A", "a"]
    # Node 20's ["...", ...].sort((a, b) => a.localeCompare(b)) in the en-US locale
    assert sorted(names, key=collation_key) == [
        "a",
        "A",
        "a b",
        "a_b",
        "a-b",
        "ab",
        "main_test.py",
        "main.py",
        "main.PY",
        "Main.py",
    ]


def test_a_tab_list_narrows_as_the_word_grows_until_an_entry_is_chosen(tmp_path: Path) -> None:
    _tree(tmp_path, "alpha.txt", "beta.txt", "bravo/")
    completer = EditorCompleter(_NoCommands(), lambda: tmp_path)
    assert [c.text for c in _complete(completer, "!cat ", tab=True)] == [
        "bravo/",
        "alpha.txt",
        "beta.txt",
    ]
    narrowed = _complete(completer, "!cat b")  # typed on: the list stays open, narrower
    assert [c.text for c in narrowed] == ["bravo/", "beta.txt"]
    assert _complete(completer, "!cat b x") == []  # another word: the list is closed
    assert _complete(completer, "!cat b") == []  # and stays closed
    _complete(completer, "!cat ", tab=True)
    (first, _) = _complete(completer, "!cat b")
    assert isinstance(first, FileCompletion)
    assert first.chosen is not None
    first.chosen()  # an entry chosen: typing on opens no list
    assert _complete(completer, "!cat bravo/x") == []
    assert _complete(completer, "!cat bravo/", tab=True) == []  # empty directory


def test_only_the_one_path_a_tab_found_counts_as_inserted_at_once(tmp_path: Path) -> None:
    _tree(tmp_path, "my notes.txt", "alpha.txt", "alps.txt")
    completer = EditorCompleter(_NoCommands(), lambda: tmp_path)
    (alone,) = _complete(completer, "my", tab=True)  # one path, quoted: inserted at once
    assert isinstance(alone, FileCompletion)
    assert (alone.text, alone.alone) == ('"my notes.txt"', True)
    assert len(_complete(completer, "al", tab=True)) == 2  # a list
    (narrowed,) = _complete(completer, "alph")  # typed on to one entry: still a list to choose
    assert isinstance(narrowed, FileCompletion)
    assert (narrowed.text, narrowed.alone) == ("alpha.txt", False)


def test_a_single_tab_candidate_opens_no_list(tmp_path: Path) -> None:
    _tree(tmp_path, "only.txt")
    completer = EditorCompleter(_NoCommands(), lambda: tmp_path)
    assert [c.text for c in _complete(completer, "o", tab=True)] == ["only.txt"]
    assert _complete(completer, "on") == []


def test_a_directory_outside_the_working_tree_is_walked_to_a_smaller_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pi_context.cli.interactive import completion

    outside = _tree(tmp_path / "outside", *(f"f{n:02}.txt" for n in range(30)))
    work = _tree(tmp_path / "work", *(f"sub/g{n:02}.txt" for n in range(30)))
    monkeypatch.setattr(completion, "MAX_OUTSIDE_ENTRIES", 5)
    index = FileIndex()
    assert len(_values(f"@{outside}/", work, index)) == 5
    assert len(_values("@sub/", work, index)) == 20  # inside: the usual bound
