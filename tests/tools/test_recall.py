"""The recall tool: verbatim replaced entries, bounded output, clear errors."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pi_context.errors import ToolError
from pi_context.messages import text_block, tool_result_message, user_message
from pi_context.session import Session
from pi_context.testing import FixedClock, SequentialIds
from pi_context.tools.base import ToolContext, ToolOutcome
from pi_context.tools.recall import ENTRY_MAX_BYTES, RecallTool


@pytest.fixture
def session(tmp_path: Path) -> Session:
    s = Session.create(tmp_path / "s.jsonl", cwd="/w", ids=SequentialIds(), clock=FixedClock())
    s.append_message(user_message("The release tag must be v9.4.2-lynx, not v9.4.1."))
    s.append_message(
        tool_result_message("c", "bash", [text_block("lynx " + "log line\n" * 20_000)])
    )
    kept = s.append_message(user_message("lynx is still mentioned here")).id
    s.append_compaction("Release work happened.", kept, 100)
    return s


def _run(tool: RecallTool, args: dict[str, Any], tmp_path: Path) -> ToolOutcome:
    ctx = ToolContext("call", tmp_path, None, None)
    return asyncio.run(tool.run(args, ctx))


def test_returns_replaced_entries_verbatim_and_not_those_in_context(
    session: Session, tmp_path: Path
) -> None:
    tool = RecallTool(lambda: session, cache_dir=str(tmp_path / "c"))
    outcome = _run(tool, {"query": "release tag"}, tmp_path)
    assert "The release tag must be v9.4.2-lynx, not v9.4.1." in outcome.text
    assert "summarized by compaction (00000004)" in outcome.text
    hits = outcome.details["hits"]
    assert [h["id"] for h in hits] == ["00000001"]
    everything = _run(tool, {"query": "lynx"}, tmp_path)
    ids = [h["id"] for h in everything.details["hits"]]
    assert "00000003" not in ids  # still in context: not searched


def test_a_long_entry_and_the_whole_result_are_cut(session: Session, tmp_path: Path) -> None:
    tool = RecallTool(lambda: session, cache_dir=str(tmp_path / "c"))
    outcome = _run(tool, {"query": "log line", "limit": 50}, tmp_path)
    assert "more of this entry not shown" in outcome.text
    assert len(outcome.text.encode()) < ENTRY_MAX_BYTES + 2_000


def test_no_match_says_so(session: Session, tmp_path: Path) -> None:
    tool = RecallTool(lambda: session, cache_dir=str(tmp_path / "c"))
    outcome = _run(tool, {"query": "zebra"}, tmp_path)
    assert not outcome.is_error
    assert "Nothing outside your context matches 'zebra'" in outcome.text


@pytest.mark.parametrize(
    ("args", "message"),
    [({"query": "  "}, "query must"), ({"query": "x", "limit": "many"}, "limit must")],
)
def test_bad_arguments_are_tool_errors(
    session: Session, tmp_path: Path, args: dict[str, Any], message: str
) -> None:
    tool = RecallTool(lambda: session, cache_dir=str(tmp_path / "c"))
    with pytest.raises(ToolError, match=message):
        _run(tool, args, tmp_path)


def test_declaration_is_our_own_and_strict(session: Session) -> None:
    declaration = RecallTool(lambda: session).declaration()
    assert declaration["name"] == "recall"
    assert declaration["parameters"]["required"] == ["query"]
    assert "constrainedSampling" in declaration


def _long_session(tmp_path: Path, text: str) -> Session:
    tmp_path.mkdir(exist_ok=True)
    s = Session.create(tmp_path / "l.jsonl", cwd="/w", ids=SequentialIds(), clock=FixedClock())
    s.append_message(tool_result_message("c", "bash", [text_block(text)]))
    kept = s.append_message(user_message("later")).id
    s.append_compaction("Tests ran.", kept, 100)
    return s


def test_a_long_entry_comes_back_as_its_matching_lines_with_their_neighbours(
    tmp_path: Path,
) -> None:
    lines = [f"test_{i} passed" for i in range(200)]
    lines[120] = "E   AssertionError: quota exceeded for tenant OTTER-5521"
    session = _long_session(tmp_path, "\n".join(lines))
    tool = RecallTool(lambda: session, cache_dir=str(tmp_path / "c"))
    outcome = _run(tool, {"query": "quota exceeded"}, tmp_path)
    assert "E   AssertionError: quota exceeded for tenant OTTER-5521" in outcome.text
    # two lines either side, word for word; the rest (with the tool's name line) left out,
    # a note per gap
    assert "test_118 passed\ntest_119 passed\nE   Assert" in outcome.text
    assert "OTTER-5521\ntest_121 passed\ntest_122 passed\n" in outcome.text
    assert "test_117 passed" not in outcome.text
    assert "test_123 passed" not in outcome.text
    assert "[… 119 lines without the query's words not shown]" in outcome.text
    assert "[… 77 lines without the query's words not shown]" in outcome.text


def test_a_short_entry_or_one_without_a_matching_line_comes_back_whole(tmp_path: Path) -> None:
    short = "\n".join(f"row {i}: ok" for i in range(10)) + "\nquota exceeded"
    session = _long_session(tmp_path, short)
    tool = RecallTool(lambda: session, cache_dir=str(tmp_path / "c"))
    assert short in _run(tool, {"query": "quota"}, tmp_path).text
    # the stemmer matched another form: the stem places the lines
    stemmed = "\n".join(f"row {i}: ok" for i in range(100)) + "\nthe quotas were exceeded"
    session = _long_session(tmp_path / "2", stemmed)
    tool = RecallTool(lambda: session, cache_dir=str(tmp_path / "c2"))
    text = _run(tool, {"query": "exceeding"}, tmp_path).text
    assert "row 98: ok\nrow 99: ok\nthe quotas were exceeded" in text
    assert "row 97: ok" not in text
