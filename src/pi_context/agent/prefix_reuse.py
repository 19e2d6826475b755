"""Per-request work that redoes only what changed since the previous request.

A request's transcript is the previous request's plus a few new messages. :class:`PrefixFlatMap`
exploits that: it keeps the per-item results of its last call and recomputes only the items
after the longest common prefix. The prefix test runs at C speed, so a turn costs a few list
copies plus the new items, instead of a Python-level pass over the whole context.

Two keys decide what "the same item" means:

* **the entry key** (``key=``), for the stages before the transform chain, whose items are
  projected entries: :data:`~pi_context.session.projection.EntryKey` is ``(entry id, edit
  generation, speaks)``. Entries are append-only and a ``context_edit`` starts a new
  generation, so an equal key means equal messages, whether the projection was kept
  incrementally, rebuilt after a compaction or a leaf move, or taken again. Identity is tried
  first (an incremental projection keeps its items), the key where it fails.
* **identity**, after the transform chain, where a message no longer maps to one entry
  (extension ``context`` handlers may drop, merge or insert messages). Identity is sound there
  because of what the chain's items can be: the session's stored messages, which are never
  changed (the public API hands out copies: :meth:`Session.projection()
  <pi_context.session.Session.projection>`, events, extension handlers), or messages the chain
  built itself and keeps to itself. When an extension rewrites the context, its output is new
  objects on every request, so nothing is carried from one request to the next: the work is
  produced and consumed inside one request build.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Generic, TypeVar

__all__ = ["PrefixFlatMap", "common_prefix"]

T = TypeVar("T")
R = TypeVar("R")


def common_prefix(
    old: Sequence[T], new: Sequence[T], key: Callable[[T], Hashable] | None = None
) -> int:
    """The number of leading positions where ``old`` and ``new`` hold the same items: the same
    objects, or (with ``key``) items with equal keys."""
    limit = min(len(old), len(new))
    if all(map(operator.is_, old, new)):
        return limit
    if key is None:
        differs = map(operator.is_not, old, new)
    else:
        differs = map(operator.ne, map(key, old), map(key, new))
    return next(itertools.compress(itertools.count(), differs), limit)


class PrefixFlatMap(Generic[T, R]):
    """``[r for i, item in enumerate(items) for r in fn(i, item)]``, reusing the previous call's
    results for the unchanged leading items (compared by identity, or by ``key``). ``fn`` must
    depend only on its arguments (and on the item's key alone, when there is one)."""

    __slots__ = ("_ends", "_fn", "_items", "_key", "_out")

    def __init__(
        self,
        fn: Callable[[int, T], Iterable[R]],
        *,
        key: Callable[[T], Hashable] | None = None,
    ) -> None:
        self._fn = fn
        self._key = key
        self._items: list[T] = []
        self._out: list[R] = []
        self._ends: list[int] = []  # _ends[i]: len(_out) after item i

    def __call__(self, items: Sequence[T]) -> list[R]:
        """The flat results for ``items`` (a new list the caller may keep or change)."""
        keep = common_prefix(self._items, items, self._key)
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
