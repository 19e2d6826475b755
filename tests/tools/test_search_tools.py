"""The read-only built-ins ``grep``, ``find`` and ``ls``: their declarations, results, limits and
notes, and the ignore rules of the tree they search."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pi_context.tools import Tool, ToolOutcome, run_tool
from pi_context.tools.find import FindTool, glob_regex
from pi_context.tools.grep import GrepTool, cut_line
from pi_context.tools.ls import LsTool
from pi_context.tools.registry import OPTIONAL_TOOL_NAMES, optional_tools


def _call(tool: Tool, cwd: Path, **arguments: Any) -> ToolOutcome:
    return asyncio.run(run_tool(tool, "c1", arguments, cwd=cwd))


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_optional_tools_are_grep_find_ls_with_pis_parameters() -> None:
    tools = optional_tools()
    assert [t.name for t in tools] == list(OPTIONAL_TOOL_NAMES) == ["grep", "find", "ls"]
    params = {t.name: t.declaration()["parameters"] for t in tools}
    assert list(params["grep"]["properties"]) == [
        "pattern",
        "path",
        "glob",
        "ignoreCase",
        "literal",
        "context",
        "limit",
    ]
    assert params["grep"]["required"] == ["pattern"]
    assert list(params["find"]["properties"]) == ["pattern", "path", "limit"]
    assert params["find"]["required"] == ["pattern"]
    assert list(params["ls"]["properties"]) == ["path", "limit"]
    assert "required" not in params["ls"]


# -- ls -----------------------------------------------------------------------------------------


def test_ls_sorts_case_insensitively_marks_directories_and_shows_dotfiles(tmp_path: Path) -> None:
    _write(tmp_path, {"b.txt": "", "A.txt": "", ".env": "", "sub/x": ""})
    (tmp_path / "gone").symlink_to(tmp_path / "missing")
    assert _call(LsTool(), tmp_path).text == ".env\nA.txt\nb.txt\nsub/"


def test_ls_limit_note_and_errors(tmp_path: Path) -> None:
    _write(tmp_path, {f"f{i}": "" for i in range(5)})
    out = _call(LsTool(), tmp_path, limit=2)
    assert out.text == "f0\nf1\n\n[2 entries limit reached. Use limit=4 for more]"
    assert out.details == {"entryLimitReached": 2}
    assert _call(LsTool(), tmp_path, limit=0).text.startswith("f0\n\n[1 entries limit")
    (tmp_path / "empty").mkdir()
    assert _call(LsTool(), tmp_path, path="empty").text == "(empty directory)"
    missing = _call(LsTool(), tmp_path, path="nope")
    assert missing.is_error
    assert missing.text == f"Path not found: {tmp_path / 'nope'}"
    assert _call(LsTool(), tmp_path, path="f0").text == f"Not a directory: {tmp_path / 'f0'}"


def test_ls_caps_output_at_50kb(tmp_path: Path) -> None:
    for i in range(500):
        (tmp_path / (f"{i:03d}" + "x" * 200)).touch()
    out = _call(LsTool(), tmp_path)
    assert out.text.endswith("\n\n[50.0KB limit reached]")
    assert out.details is not None
    assert out.details["truncation"]["totalLines"] == 500


# -- find ---------------------------------------------------------------------------------------


def test_find_matches_names_at_any_depth_and_paths_from_the_root(tmp_path: Path) -> None:
    _write(tmp_path, {"a.py": "", "src/b.py": "", "src/deep/c.py": "", "pkg/src/d.py": ""})
    assert _call(FindTool(), tmp_path, pattern="*.py").text == (
        "a.py\npkg/src/d.py\nsrc/b.py\nsrc/deep/c.py"
    )
    assert _call(FindTool(), tmp_path, pattern="src/*.py").text == "src/b.py"
    assert _call(FindTool(), tmp_path, pattern="./src/**/*.py").text == ("src/b.py\nsrc/deep/c.py")
    assert _call(FindTool(), tmp_path, pattern="**/src/*.py").text == "pkg/src/d.py\nsrc/b.py"
    assert _call(FindTool(), tmp_path, pattern="src").text == "pkg/src/\nsrc/"
    assert _call(FindTool(), tmp_path, pattern="*.rs").text == "No files found matching pattern"


def test_find_smart_case_and_braces(tmp_path: Path) -> None:
    _write(tmp_path, {"Readme.MD": "", "x.toml": "", "y.cfg": ""})
    assert _call(FindTool(), tmp_path, pattern="readme.md").text == "Readme.MD"
    assert (
        _call(FindTool(), tmp_path, pattern="README.md").text == "No files found matching pattern"
    )
    assert _call(FindTool(), tmp_path, pattern="*.{toml,cfg}").text == "x.toml\ny.cfg"


def test_find_honours_gitignore_hidden_files_and_skips_git(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    _write(
        tmp_path,
        {
            ".gitignore": "build/\n*.log\n!keep.log\n",
            ".git/config": "",
            ".hidden.txt": "",
            "build/out.txt": "",
            "a.log": "",
            "keep.log": "",
            "sub/.gitignore": "local.txt\n",
            "sub/local.txt": "",
            "sub/other.txt": "",
        },
    )
    assert _call(FindTool(), tmp_path, pattern="*").text == (
        ".gitignore\n.hidden.txt\nkeep.log\nsub/\nsub/.gitignore\nsub/other.txt"
    )
    # the rules of the directories above the searched one still apply
    assert _call(FindTool(), tmp_path / "sub", pattern="*.txt").text == "other.txt"


def test_find_limit_note(tmp_path: Path) -> None:
    _write(tmp_path, {f"f{i}.txt": "" for i in range(3)})
    out = _call(FindTool(), tmp_path, pattern="*.txt", limit=2)
    assert out.text == (
        "f0.txt\nf1.txt\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]"
    )
    assert out.details == {"resultLimitReached": 2}
    assert _call(FindTool(), tmp_path, pattern="*.txt", limit=3).details is None


def test_glob_regex_keeps_stars_within_a_component() -> None:
    assert glob_regex("src/*.py").fullmatch("src/a/b.py") is None
    assert glob_regex("src/**/*.py").fullmatch("src/b.py") is not None
    assert glob_regex("src/**").fullmatch("src") is None
    assert glob_regex("[!a]x").fullmatch("bx") is not None


# -- grep ---------------------------------------------------------------------------------------


def test_grep_lines_paths_and_context(tmp_path: Path) -> None:
    _write(tmp_path, {"a.py": "one\ntwo\nthree\nfour\n", "sub/b.txt": "Two\r\n"})
    assert _call(GrepTool(), tmp_path, pattern="two").text == "a.py:2: two"
    assert _call(GrepTool(), tmp_path, pattern="two", ignoreCase=True).text == (
        "a.py:2: two\nsub/b.txt:1: Two"
    )
    assert _call(GrepTool(), tmp_path, pattern="two", context=1).text == (
        "a.py-1- one\na.py:2: two\na.py-3- three"
    )
    assert _call(GrepTool(), tmp_path, pattern="t.o", literal=True).text == "No matches found"
    assert _call(GrepTool(), tmp_path, pattern="o", path="a.py", limit=1).text == (
        "a.py:1: one\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]"
    )


def test_grep_glob_filters_files(tmp_path: Path) -> None:
    _write(tmp_path, {"a.py": "x\n", "b.txt": "x\n", "src/c.py": "x\n", "vendor/d.py": "x\n"})
    assert _call(GrepTool(), tmp_path, pattern="x", glob="*.py").text == (
        "a.py:1: x\nsrc/c.py:1: x\nvendor/d.py:1: x"
    )
    assert _call(GrepTool(), tmp_path, pattern="x", glob="./src/*.py").text == "src/c.py:1: x"
    assert _call(GrepTool(), tmp_path, pattern="x", glob="!vendor").text == (
        "a.py:1: x\nb.txt:1: x\nsrc/c.py:1: x"
    )


def test_grep_limit_keeps_the_last_matchs_context_and_needs_proof(tmp_path: Path) -> None:
    _write(tmp_path, {"a": "m1\nm2\nc\nm3\n"})
    out = _call(GrepTool(), tmp_path, pattern="m", limit=2, context=1)
    assert out.text == (
        "a:1: m1\na:2: m2\na-3- c\n\n"
        "[2 matches limit reached. Use limit=4 for more, or refine pattern]"
    )
    assert out.details == {"matchLimitReached": 2}
    # exactly `limit` matches: no note
    assert _call(GrepTool(), tmp_path, pattern="m", limit=3).details is None


def test_grep_cuts_long_lines_skips_binary_and_ignored_files(tmp_path: Path) -> None:
    _write(tmp_path, {"long": "x" * 600 + "\n", ".ignore": "skip.txt\n", "skip.txt": "x\n"})
    (tmp_path / "bin").write_bytes(b"x\0y")
    out = _call(GrepTool(), tmp_path, pattern="x", glob="!.ignore")
    assert out.text == (
        "long:1: " + "x" * 500 + "... [truncated]\n\n"
        "[Some lines truncated to 500 chars. Use read tool to see full lines]"
    )
    assert out.details == {"linesTruncated": True}


def test_grep_errors(tmp_path: Path) -> None:
    assert _call(GrepTool(), tmp_path, pattern="x", path="nope").text == (
        f"Path not found: {tmp_path / 'nope'}"
    )
    bad = _call(GrepTool(), tmp_path, pattern="(")
    assert bad.is_error
    assert bad.text.startswith("regex parse error:")


def test_cut_line_counts_utf16_units() -> None:
    assert cut_line("😀" * 251) == ("😀" * 250 + "... [truncated]", True)
    assert cut_line("a" * 500) == ("a" * 500, False)


@pytest.mark.parametrize("tool", [GrepTool(), FindTool()])
def test_an_aborted_call_stops(tmp_path: Path, tool: Tool) -> None:
    signal = asyncio.Event()
    signal.set()
    out = asyncio.run(tool.execute("c", {"pattern": "x"}, cwd=tmp_path, signal=signal))
    assert out.is_error
    assert out.text == "Operation aborted"


def test_ls_reports_an_unreadable_directory_as_node_does(tmp_path: Path) -> None:
    import os

    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        if os.access(locked, os.R_OK):
            pytest.skip("running as a user who reads any directory")
        assert _call(LsTool(), tmp_path, path="locked").text == (
            f"Cannot read directory: EACCES: permission denied, scandir '{locked}'"
        )
    finally:
        locked.chmod(0o755)
