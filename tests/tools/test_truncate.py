"""Head/tail truncation: limits, notes' numbers, and invariants."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pi_context.tools.truncate import (
    format_size,
    split_lines,
    truncate_head,
    truncate_tail,
)


def test_format_size() -> None:
    assert format_size(0) == "0B"
    assert format_size(1023) == "1023B"
    assert format_size(51200) == "50.0KB"
    assert format_size(1536) == "1.5KB"
    assert format_size(3 * 1024 * 1024) == "3.0MB"


def test_split_lines_drops_one_trailing_empty_piece() -> None:
    assert split_lines("a\nb\n") == ["a", "b"]
    assert split_lines("a\nb\n\n") == ["a", "b", ""]
    assert split_lines("") == [""]


def test_head_within_limits_is_verbatim() -> None:
    r = truncate_head("a\nb\n")
    assert not r.truncated
    assert r.content == "a\nb\n"
    assert r.total_lines == 2
    assert r.truncated_by is None


def test_head_by_lines() -> None:
    text = "\n".join(str(i) for i in range(10))
    r = truncate_head(text, max_lines=3)
    assert r.truncated
    assert r.truncated_by == "lines"
    assert r.content == "0\n1\n2"
    assert (r.output_lines, r.total_lines) == (3, 10)


def test_head_by_bytes_counts_joining_newlines() -> None:
    r = truncate_head("aaaa\nbbbb\ncccc", max_bytes=9)
    assert r.truncated_by == "bytes"
    assert r.content == "aaaa\nbbbb"
    assert r.output_bytes == 9


def test_head_first_line_too_big() -> None:
    r = truncate_head("x" * 20 + "\nshort", max_bytes=10)
    assert r.first_line_exceeds_limit
    assert r.content == ""
    assert r.to_json()["firstLineExceedsLimit"] is True


def test_tail_keeps_the_end() -> None:
    text = "\n".join(str(i) for i in range(10)) + "\n"
    r = truncate_tail(text, max_lines=2)
    assert r.content == "8\n9"
    assert r.truncated_by == "lines"


def test_tail_partial_last_line_respects_utf8_boundaries() -> None:
    r = truncate_tail("é" * 10, max_bytes=5)
    assert r.last_line_partial
    assert r.content == "éé"  # 5 bytes cut forward to a character boundary -> 4 bytes
    assert r.output_bytes == 4


def test_truncation_json_keys_in_pi_order() -> None:
    keys = list(truncate_head("a").to_json())
    assert keys == [
        "content",
        "truncated",
        "truncatedBy",
        "totalLines",
        "totalBytes",
        "outputLines",
        "outputBytes",
        "lastLinePartial",
        "firstLineExceedsLimit",
        "maxLines",
        "maxBytes",
    ]


lines_text = st.lists(st.text(alphabet="ab\u00e9\u4e2d ", max_size=12), max_size=40).map("\n".join)


@given(lines_text, st.integers(1, 8), st.integers(1, 60))
def test_head_is_a_prefix_within_limits(text: str, max_lines: int, max_bytes: int) -> None:
    r = truncate_head(text, max_lines=max_lines, max_bytes=max_bytes)
    if r.truncated:
        assert text.startswith(r.content)
        assert r.output_lines <= max_lines
        assert len(r.content.encode()) <= max_bytes
    else:
        assert r.content == text


@given(lines_text, st.integers(1, 8), st.integers(1, 60))
def test_tail_is_a_suffix_within_limits(text: str, max_lines: int, max_bytes: int) -> None:
    r = truncate_tail(text, max_lines=max_lines, max_bytes=max_bytes)
    if r.truncated:
        body = text[:-1] if text.endswith("\n") else text  # the final newline is not a line
        assert body.endswith(r.content)
        assert r.output_lines <= max_lines
        assert len(r.content.encode()) <= max_bytes
    else:
        assert r.content == text
