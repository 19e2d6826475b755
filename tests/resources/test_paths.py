"""Path helpers: ancestor walks, the git root, ``~`` expansion."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_context.resources.paths import ancestors, expand_home, find_git_root


def test_ancestors_run_from_the_path_up_to_the_root() -> None:
    assert list(ancestors("/a/b/c")) == ["/a/b/c", "/a/b", "/a", "/"]
    assert list(ancestors("/")) == ["/"]


def test_find_git_root_is_the_nearest_dot_git(tmp_path: Path) -> None:
    outer, inner = tmp_path / "outer", tmp_path / "outer" / "sub" / "inner"
    (inner / "deep").mkdir(parents=True)
    (outer / ".git").mkdir()
    assert find_git_root(str(inner / "deep")) == str(outer)
    (inner / ".git").write_text("gitdir: elsewhere\n")  # a worktree's .git file counts too
    assert find_git_root(str(inner / "deep")) == str(inner)
    assert find_git_root(str(inner)) == str(inner)


def test_find_git_root_none_outside_a_repository(tmp_path: Path) -> None:
    if any(os.path.lexists(os.path.join(d, ".git")) for d in ancestors(str(tmp_path))):
        pytest.skip("the temporary directory is inside a git checkout")
    assert find_git_root(str(tmp_path)) is None


def test_expand_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert expand_home("~") == str(tmp_path)
    assert expand_home("~/x/y") == str(tmp_path / "x" / "y")
    assert expand_home("~user/x") == "~user/x"
    assert expand_home("a/~") == "a/~"
