"""Deep trees and huge cycles in the inspection commands.

The tree walk copied the set of ancestors at every step (quadratic in depth: 40k linear entries
took 22 s, a 1M chain over a minute), and the warning about a 100k-entry cycle was one 1.2 MB
line. Walks are now linear and every problem message is bounded. (Speed and memory numbers
are measured in ``benchmarks/bench_inspect.py``, not asserted here; the timeout only catches
a walk that never ends.)
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from pi_context.cli.main import main as pictx_main
from pi_context.session import LoadProblem, Session
from pi_context.session.problems import MAX_PROBLEM_CHARS
from tests.hostile.helpers import HEADER, entry, line, raw_user

pytestmark = pytest.mark.timeout(600)


def _chain(path: Path, count: int, *, cycle: bool = False) -> Path:
    with path.open("wb") as out:
        out.write(line(dict(HEADER, cwd=str(path.parent))))
        for index in range(count):
            parent = f"{index - 1:08x}" if index else (f"{count - 1:08x}" if cycle else None)
            out.write(line(entry(f"{index:08x}", parent, message=raw_user(f"n{index}"))))
    return path


def _run(*args: str) -> tuple[int, str, str]:
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = pictx_main(list(args))
    out.flush()
    assert isinstance(out.buffer, io.BytesIO)
    return code, out.buffer.getvalue().decode(), err.getvalue()


def test_a_deep_chain_walks_in_linear_time(tmp_path: Path) -> None:
    path = _chain(tmp_path / "s.jsonl", 40_000)
    with Session.open(path) as session:
        depths = [depth for _, depth in session.tree.preorder()]
        assert depths == list(range(40_000))
        assert len(session.leaves()) == 1
    code, out, err = _run("session", "tree", str(path))
    assert code == 0
    assert err == ""
    lines = out.splitlines()
    assert len(lines) == 40_000
    assert lines[0].startswith("* 00000000 user: n0")
    assert lines[-1].endswith("← leaf")
    assert all(text.startswith("* ") for text in lines)


def test_a_huge_cycle_is_reported_in_one_short_line(tmp_path: Path) -> None:
    path = _chain(tmp_path / "s.jsonl", 100_000, cycle=True)
    with Session.open(path) as session:
        (problem,) = session.problems
        assert problem.line == 2
        assert "(100000 entries)" in problem.reason
        assert len(str(problem)) < MAX_PROBLEM_CHARS + len(str(path)) + 10
    for command in ("info", "tree"):
        code, _, err = _run("session", command, str(path))
        assert code == 0
        assert len(err.splitlines()) == 1
        assert len(err) < 500


def test_every_problem_message_is_bounded() -> None:
    problem = LoadProblem("f", 3, "x" * 100_000, "y" * 100_000)
    assert len(problem.reason) == MAX_PROBLEM_CHARS
    assert problem.error.endswith("(100000 characters)")


def test_problem_messages_are_one_inert_line() -> None:
    problem = LoadProblem("f", 1, "key \x1b]52;c;aGk=\x07 and\nnext")
    assert problem.reason == "key \\x1b]52;c;aGk=\\x07 and\\x0anext"
