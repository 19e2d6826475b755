"""Per-request work that redoes only what changed since the previous request.

A request's transcript is the previous request's plus a few new messages, and the stored
messages are the very same objects from one request to the next (the session's projection is
kept incrementally). :class:`PrefixFlatMap` exploits that: it keeps the per-item results of its
last call and recomputes only the items after the longest common prefix, compared by identity.
The prefix test runs at C speed, so a turn costs a few list copies plus the new messages,
instead of a Python-level pass over the whole context.

Identity is the right key because nothing mutates a message once it is stored: extension
handlers get deep copies and the request-time projections build new messages.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Generic, TypeVar

__all__ = ["PrefixFlatMap", "common_prefix"]

T = TypeVar("T")
R = TypeVar("R")


def common_prefix(old: Sequence[object], new: Sequence[object]) -> int:
    """The number of leading positions where ``old`` and ``new`` hold the same objects."""
    if all(map(operator.is_, old, new)):
        return min(len(old), len(new))
    for index, (a, b) in enumerate(zip(old, new, strict=False)):
        if a is not b:
            return index
    return min(len(old), len(new))  # pragma: no cover - the all() above decided it


class PrefixFlatMap(Generic[T, R]):
    """``[r for i, item in enumerate(items) for r in fn(i, item)]``, reusing the previous call's
    results for the unchanged leading items. ``fn`` must depend only on its arguments."""

    __slots__ = ("_ends", "_fn", "_items", "_out")

    def __init__(self, fn: Callable[[int, T], Iterable[R]]) -> None:
        self._fn = fn
        self._items: list[T] = []
        self._out: list[R] = []
        self._ends: list[int] = []  # _ends[i]: len(_out) after item i

    def __call__(self, items: Sequence[T]) -> list[R]:
        """The flat results for ``items`` (a new list the caller may keep or change)."""
        keep = common_prefix(self._items, items)
        out = self._out[: self._ends[keep - 1]] if keep else []
        ends = self._ends[:keep]
        fn = self._fn
        for index in range(keep, len(items)):
            out.extend(fn(index, items[index]))
            ends.append(len(out))
        self._items = list(items)
        self._out = out
        self._ends = ends
        return list(out)

    def clear(self) -> None:
        """Forget the previous call (the next one computes everything)."""
        self._items, self._out, self._ends = [], [], []
