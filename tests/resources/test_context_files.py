from __future__ import annotations

import builtins
import errno
import os
from pathlib import Path
from typing import Any

import pytest

from pi_context.resources import context_files, load_context_files
from pi_context.resources.context_files import MAX_CONTEXT_FILE_BYTES


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    agent = tmp_path / "agent"
    agent.mkdir()
    cwd = tmp_path / "repo" / "pkg"
    cwd.mkdir(parents=True)
    return agent, cwd


def _paths(files: list) -> list[str]:  # type: ignore[type-arg]
    return [f.path for f in files]


def test_order_precedence_and_bom(tmp_path: Path) -> None:
    agent, cwd = _tree(tmp_path)
    (agent / "CLAUDE.md").write_text("global")
    (tmp_path / "repo" / "AGENTS.md").write_text("repo")
    (tmp_path / "repo" / "CLAUDE.md").write_text("ignored")
    (cwd / "AGENTS.override.md").write_bytes("\ufeff\ufeffpkg".encode())
    (cwd / "AGENTS.md").write_text("ignored")
    files = [f for f in load_context_files(cwd, agent) if f.path.startswith(str(tmp_path))]
    assert _paths(files) == [
        str(agent / "CLAUDE.md"),
        str(tmp_path / "repo" / "AGENTS.md"),
        str(cwd / "AGENTS.override.md"),
    ]
    assert files[-1].content == "\ufeffpkg"  # only one BOM is stripped


def test_agent_dir_that_is_also_an_ancestor_loads_once(tmp_path: Path) -> None:
    _, cwd = _tree(tmp_path)
    (tmp_path / "repo" / "AGENTS.md").write_text("repo")
    files = [
        f for f in load_context_files(cwd, tmp_path / "repo") if f.path.startswith(str(tmp_path))
    ]
    assert _paths(files) == [str(tmp_path / "repo" / "AGENTS.md")]


def test_binary_huge_and_loop_become_diagnostics(tmp_path: Path) -> None:
    agent, cwd = _tree(tmp_path)
    (cwd / "AGENTS.override.md").write_bytes(b"\x00\x01binary")
    (cwd / "AGENTS.md").write_bytes(b"x" * (MAX_CONTEXT_FILE_BYTES + 1))
    os.symlink("AGENTS.MD", cwd / "AGENTS.MD.tmp")
    os.symlink("AGENTS.MD.tmp", cwd / "AGENTS.MD")
    os.remove(cwd / "AGENTS.MD.tmp")
    os.symlink("AGENTS.MD", cwd / "AGENTS.MD.tmp")  # AGENTS.MD -> .tmp -> AGENTS.MD: a loop
    (cwd / "CLAUDE.md").write_bytes("caf\xe9 ok".encode("latin-1"))
    diags: list = []  # type: ignore[type-arg]
    files = load_context_files(cwd, agent, diagnostics=diags)
    mine = [f for f in files if f.path.startswith(str(cwd))]
    assert _paths(mine) == [str(cwd / "CLAUDE.md")]
    assert mine[0].content == "caf\ufffd ok"
    by_path = {d.path: d.message for d in diags}
    assert "binary" in by_path[str(cwd / "AGENTS.override.md")]
    assert "larger than" in by_path[str(cwd / "AGENTS.md")]
    assert "symlink loop" in by_path[str(cwd / "AGENTS.MD")]
    assert "UTF-8" in by_path[str(cwd / "CLAUDE.md")]


def test_unreadable_file_falls_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent, cwd = _tree(tmp_path)
    locked = cwd / "AGENTS.md"
    locked.write_text("secret")
    (cwd / "CLAUDE.md").write_text("fallback")
    # chmod(0) does not stop root (CI runs as root): make the read itself fail for this path.
    real_open = builtins.open

    def deny(file: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(file) == str(locked):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(context_files, "open", deny, raising=False)
    diags: list = []  # type: ignore[type-arg]
    files = load_context_files(cwd, agent, diagnostics=diags)
    assert files[-1].path == str(cwd / "CLAUDE.md")
    assert files[-1].content == "fallback"
    mine = [(d.path, d.message) for d in diags if d.path.startswith(str(tmp_path))]
    assert mine == [(str(locked), f"Could not read {locked}: Permission denied")]


def test_directory_candidate_is_skipped(tmp_path: Path) -> None:
    agent, cwd = _tree(tmp_path)
    (cwd / "AGENTS.md").mkdir()
    (cwd / "CLAUDE.md").write_text("claude")
    assert load_context_files(cwd, agent)[-1].path == str(cwd / "CLAUDE.md")


def test_nested_worktree_shadows_main_repo_file(tmp_path: Path) -> None:
    main = tmp_path / "proj"
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (main / ".git" / "HEAD").write_text("ref: x\n")
    (main / ".git" / "worktrees" / "wt" / "HEAD").write_text("ref: y\n")
    (main / ".git" / "worktrees" / "wt" / "commondir").write_text("../..\n")
    (main / "AGENTS.md").write_text("main")
    wt = main / "wt"
    wt.mkdir()
    (wt / ".git").write_text("gitdir: ../.git/worktrees/wt\n")
    (wt / "AGENTS.md").write_text("worktree")
    files = [
        f for f in load_context_files(wt, tmp_path / "none") if f.path.startswith(str(tmp_path))
    ]
    assert [f.content for f in files] == ["worktree"]
    # with CLAUDE.md in the worktree instead, the main AGENTS.md is not the same file name
    (wt / "AGENTS.md").unlink()
    (wt / "CLAUDE.md").write_text("wt claude")
    files = [
        f for f in load_context_files(wt, tmp_path / "none") if f.path.startswith(str(tmp_path))
    ]
    assert [f.content for f in files] == ["main", "wt claude"]
