"""The streamed line window gives exactly what decoding the whole file and cutting it gives."""

from __future__ import annotations

import itertools

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pi_context.tools.line_window import read_line_window
from pi_context.tools.truncate import TruncationResult, truncate_head

# Newlines, ASCII, a 2-byte and a 3-byte character, invalid and truncated UTF-8 sequences.
_PIECES = [
    b"\n",
    b"a",
    b"bc",
    b"x" * 17,
    b"\xc3\xa9",
    b"\xe2\x82\xac",
    b"\xff",
    b"\xe2\x82",
    b"\xc3",
    b"\r",
]


def _reference(
    data: bytes, start: int, limit: int | None, max_lines: int, max_bytes: int
) -> tuple[int, int, TruncationResult | None, int]:
    """pi's way: decode everything, split, slice, head-truncate."""
    lines = data.decode("utf-8", "replace").split("\n")
    total = len(lines)
    if start >= total:
        return total, total, None, 0
    end = total if limit is None else min(total, start + max(0, limit))
    selected = lines[start:end]
    trunc = truncate_head("\n".join(selected), max_lines=max_lines, max_bytes=max_bytes)
    first = len(selected[0].encode("utf-8")) if selected else 0
    return total, end, trunc, first


def _chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


@settings(max_examples=500, deadline=None)
@example(b"ab\n" + b"c" * 15 + b"\n", [], 0, None, 5, 8)  # a line still open where the prefix ends
@example(b"\xe2\x82\n\xe2\x82", [1, 4], 0, None, 5, 3)  # a sequence cut by a chunk and a newline
@example(b"a\nb\n", [], 0, None, 2, 40)  # a trailing newline is not a line of its own
@given(
    data=st.lists(st.sampled_from(_PIECES), max_size=80).map(b"".join),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=8),
    start=st.integers(min_value=0, max_value=30),
    limit=st.none() | st.integers(min_value=-2, max_value=30),
    max_lines=st.integers(min_value=1, max_value=12),
    max_bytes=st.integers(min_value=1, max_value=40),
)
def test_streamed_window_matches_whole_file_truncation(
    data: bytes,
    cuts: list[int],
    start: int,
    limit: int | None,
    max_lines: int,
    max_bytes: int,
) -> None:
    window = read_line_window(
        _chunked(data, cuts), start, limit, max_lines=max_lines, max_bytes=max_bytes
    )
    total, end, trunc, first = _reference(data, start, limit, max_lines, max_bytes)
    assert window.total_lines == total
    if trunc is None:
        assert window.selection is None
        return
    assert window.end == end
    assert window.selection == trunc
    assert window.first_line_bytes == first


def test_a_huge_line_is_measured_without_being_kept() -> None:
    chunk = b"x" * (1 << 20)
    window = read_line_window(iter([b"short\n", *([chunk] * 64)]), 1, None)
    assert window.total_lines == 2
    assert window.first_line_bytes == 64 << 20
    assert window.selection is not None
    assert window.selection.first_line_exceeds_limit
    assert window.selection.content == ""
    assert window.selection.total_bytes == 64 << 20
