"""What ``pictx --version``, ``--help`` and ``session info`` load: each command imports what it
uses and nothing that only another command (or another code path) needs. Each runs as the
console script runs it, in a fresh interpreter, which then lists what it imported."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pi_context.cli.main import VERSION_LINE, cli, main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "session.jsonl"

CONSOLE = """
import atexit, gc, sys
DUMP = sys.argv.pop(1)
SEEN = []
def dump():
    report = {"modules": sorted(sys.modules), "gc": gc.isenabled(),
              "frozen": gc.get_freeze_count(), "seen": SEEN}
    import json  # after the list is taken
    with open(DUMP, "w", encoding="utf-8") as out:
        json.dump(report, out)
atexit.register(dump)
if sys.argv[1:3] == ["session", "info"]:
    # note whether the collector is on when the command reads the file
    from pi_context.session._index.file_index import ColumnIndex
    opened = ColumnIndex.open
    def spy(path, **options):
        SEEN.append(gc.isenabled())
        return opened(path, **options)
    ColumnIndex.open = spy
from pi_context.cli.main import main
sys.exit(main())
"""


def _console(tmp_path: Path, *args: str) -> tuple[str, dict[str, Any]]:
    """``pictx ARGS`` as the console script; its stdout and what it reported at exit."""
    dump = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-c", CONSOLE, str(dump), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={
            "PYTHONPATH": str(ROOT / "src"),
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
        },
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(dump.read_text(encoding="utf-8"))
    return done.stdout, report


def _named(modules: Sequence[str], names: Sequence[str]) -> list[str]:
    """Which of ``names`` (modules or packages, with their submodules) were imported."""
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_version_imports_no_click_and_prints_what_clicks_option_prints(tmp_path: Path) -> None:
    out, report = _console(tmp_path, "--version")
    assert out == VERSION_LINE
    assert _named(report["modules"], ["click", "typing", "pi_context.cli.group", "importlib"]) == []
    # the line is the group's own version option's (which answers --version among other args)
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output == VERSION_LINE


def test_version_among_other_arguments_is_clicks(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version", "--help"]) == 0
    assert capsys.readouterr().out == VERSION_LINE


def test_help_imports_click_but_nothing_only_other_paths_need(tmp_path: Path) -> None:
    out, report = _console(tmp_path, "--help")
    assert "Commands:" in out
    # difflib only suggests a command for a typo; pathlib and dataclasses are not needed to list
    # the commands (the error classes name paths as text)
    assert (
        _named(report["modules"], ["difflib", "pathlib", "dataclasses", "pi_context.session"]) == []
    )
    assert report["gc"] is True


def test_a_typo_still_gets_its_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sesion", "info", "x.jsonl"]) == 2
    assert "did you mean `pictx session`?" in capsys.readouterr().err


def test_session_info_imports_no_search_no_sqlite_no_openssl(tmp_path: Path) -> None:
    """Reading a session needs neither its search index (SQLite) nor new ids (``secrets``
    pulls in ``hmac`` and OpenSSL's ``_hashlib``)."""
    out, report = _console(tmp_path, "session", "info", str(EXAMPLE))
    assert "entries:" in out
    modules = report["modules"]
    assert "pi_context.session.store" in modules  # a session was read
    assert (
        _named(
            modules,
            [
                "pi_context.session.search.query",
                "pi_context.session.search.index",
                "sqlite3",
                "_sqlite3",
                "secrets",
                "hmac",
                "_hashlib",
                "difflib",
            ],
        )
        == []
    )


def test_session_info_reads_the_file_with_the_collector_back_on(tmp_path: Path) -> None:
    """The start-up's imports run with the collector paused; it is on again (the start-up's
    objects frozen) before the command reads a file of any size."""
    _, report = _console(tmp_path, "session", "info", str(EXAMPLE))
    assert report["seen"] == [True]
    assert report["gc"] is True
    assert report["frozen"] > 0


def test_a_search_still_loads_the_index(tmp_path: Path) -> None:
    out, report = _console(tmp_path, "session", "search", str(EXAMPLE), "sort")
    assert "src/list.ts" in out
    assert "pi_context.session.search.index" in report["modules"]
    assert "sqlite3" in report["modules"]
