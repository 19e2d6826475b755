from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pi_context.cli.main import cli, main
from pi_context.session.projection import SUMMARY_WRAPPERS
from tests.session.conftest import DATA

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "session.jsonl"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_context_json_shape_and_tokens() -> None:
    code, out, _ = run("session", "context", str(EXAMPLE), "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"leafId", "model", "thinkingLevel", "messages"}
    assert data["model"] == {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}
    assert data["thinkingLevel"] == "medium"
    rows = data["messages"]
    assert [r["message"]["role"] for r in rows[:2]] == ["system", "user"]
    assert rows[1]["message"]["content"][0]["text"].startswith(SUMMARY_WRAPPERS.compaction_prefix)
    assert all(set(r) == {"entryId", "tokens", "message"} for r in rows)
    assert all(isinstance(r["tokens"], int) for r in rows)
    # the context edit on the last tool result is applied
    edited = [r for r in rows if r["message"]["role"] == "toolResult"][-1]
    assert edited["message"]["content"] == [
        {"type": "text", "text": "PASS src/list.test.ts (3 tests)"}
    ]


def test_context_at_other_leaf() -> None:
    code, out, _ = run(
        "session", "context", str(DATA / "branched.jsonl"), "--leaf", "87addaeb", "--json"
    )
    assert code == 0
    assert json.loads(out)["leafId"] == "87addaeb"


def test_context_text_output() -> None:
    code, out, _ = run("session", "context", str(EXAMPLE))
    assert code == 0
    assert out.strip().splitlines()[-1].startswith("-- leaf")


def test_info_and_tree() -> None:
    code, out, _ = run("session", "info", str(EXAMPLE), "--json")
    assert code == 0
    info = json.loads(out)
    assert info["name"] == "Fix due-date sorting"
    assert info["leaves"] == 2
    code, out, _ = run("session", "tree", str(EXAMPLE))
    assert code == 0
    assert "[compaction]" in out
    assert "[branch summary]" in out
    assert "[sort-fixed]" in out
    assert out.count("← leaf") == 1


@pytest.mark.parametrize(
    "args",
    [
        ("session", "context", str(DATA / "tiny_no_header.jsonl")),
        ("session", "info", "/nonexistent/x.jsonl"),
        ("session", "context", str(EXAMPLE), "--leaf", "zzzzzzzz"),
    ],
)
def test_errors_are_one_line_and_nonzero(
    args: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(list(args))
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1
    assert err.startswith("pictx: error: ")
    name = Path(args[2]).name
    assert name in err


def test_bad_file_error_names_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["session", "info", str(DATA / "tiny_no_header.jsonl")]) == 1
    assert "tiny_no_header.jsonl:1:" in capsys.readouterr().err


def test_warnings_and_strict(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(DATA / "edge_cases.jsonl")
    assert main(["session", "info", path]) == 0
    err = capsys.readouterr().err
    assert f"pictx: warning: {path}:5: not a JSON object: skipped\n" in err
    assert main(["session", "info", path, "--strict"]) == 1
    # strict fails on the line: nothing was skipped, so the error does not say so
    assert capsys.readouterr().err == f"pictx: error: {path}:5: line 5 is not a JSON object\n"


HEADER_LINE = (
    '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}\n'
)
USER_LINE = (
    '{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z",'
    '"message":{"role":"user","content":"hi","timestamp":1}}'
)


@pytest.mark.parametrize(
    ("body", "line", "warning", "error"),
    [
        (
            USER_LINE + "\n" + USER_LINE[:40],
            3,
            "incomplete last line (torn write?): skipped",
            "line 3 (the last) is incomplete (torn write?)",
        ),
        (
            USER_LINE.replace('"parentId":null', '"parentId":"bbbbbbbb"') + "\n",
            2,
            "parent bbbbbbbb of entry aaaaaaaa does not exist: entry treated as a root",
            "parent bbbbbbbb of entry aaaaaaaa does not exist",
        ),
        (
            USER_LINE + "\n" + USER_LINE + "\n",
            2,
            "duplicate id aaaaaaaa: a later entry with this id takes its place",
            "duplicate id aaaaaaaa",
        ),
    ],
)
def test_strict_errors_name_the_problem_not_the_recovery(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    body: str,
    line: int,
    warning: str,
    error: str,
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(HEADER_LINE + body)
    assert main(["session", "info", str(path)]) == 0
    assert f"pictx: warning: {path}:{line}: {warning}\n" in capsys.readouterr().err
    assert main(["session", "info", str(path), "--strict"]) == 1
    assert capsys.readouterr().err == f"pictx: error: {path}:{line}: {error}\n"


def test_python_dash_m_runs() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pi_context", "session", "context", str(EXAMPLE), "--json"],
        capture_output=True,
        check=False,
    )
    assert result.returncode == 0
    assert json.loads(result.stdout)["leafId"]


def test_tree_survives_cycles_and_unreadable_lines(tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_text(
        '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}\n'
        '{"type":"label","id":"aaaaaaaa","parentId":"bbbbbbbb","timestamp":"t","targetId":"x"}\n'
        '{"type":"label","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"t","targetId":"x"}\n'
        '{"type":"message","id":"cccccccc","parentId":"bbbbbbbb","timestamp":"t","message":{"role":"user",,}\n'
        '{"type":"label","id":"dddddddd","parentId":"bbbbbbbb","timestamp":"t","targetId":"x"}\n'
    )
    code, out, err = run("session", "tree", str(path))
    assert code == 0
    assert "unreadable" in out
    assert "cycle" in err
    assert main(["session", "tree", str(path), "--strict"]) == 1
