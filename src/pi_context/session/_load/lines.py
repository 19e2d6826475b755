"""Splitting a session file into lines: the one splitter the loader and the file index share."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

__all__ = ["split_lines"]


def split_lines(chunks: Iterable[bytes]) -> Iterator[tuple[list[bytes], bool]]:
    """The ``\\n``-separated lines of a stream of byte chunks (newlines dropped), a batch per
    chunk that completes a line: ``(lines, True)``; then, when the stream does not end with a
    newline, its last line alone: ``([line], False)``. A line cut by chunk boundaries is
    joined once, when its end arrives; chunks are let go as soon as they are split."""
    partial: list[bytes] = []
    for chunk in chunks:
        lines = chunk.split(b"\n")
        del chunk
        tail = lines.pop()
        if lines:
            if partial:
                partial.append(lines[0])
                lines[0] = b"".join(partial)
                partial = []
            yield lines, True
        if tail:
            partial.append(tail)
    if partial:
        yield [b"".join(partial)], False
