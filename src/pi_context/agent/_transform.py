"""The transform-context chain applied to every model request, and the prefix reuse that makes
each request redo only what changed since the previous one.

In application order:

1. extension ``context`` then ``context_with_system`` handlers
   (:meth:`~pi_context.extensions.ExtensionRunner.emit_context`: handlers see no system
   messages in phase 1 and the replayed system state is restored around them);
2. the hidden-declarations projection: names of hidden tools are removed from the ``toolsAdded`` /
   ``toolsRemoved`` of every system message;
3. the forced prompt: when a run forces a system prompt, all system messages are replaced by one
   head carrying the forced text and the current tool declarations
   (:func:`pi_context.prompt.apply_forced_prompt`).

Nothing in the chain reaches the stored session: extension handlers get a deep copy, and the two
projections build new messages instead of editing the ones they are given.

**Prefix reuse.** A request's transcript is the previous request's plus a few new messages.
:class:`PrefixFlatMap` exploits that: it keeps the per-item results of its last call and
recomputes only the items after the longest common prefix. The prefix test runs at C speed, so a
turn costs a few list copies plus the new items, instead of a Python-level pass over the whole
context.

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
from collections.abc import Awaitable, Callable, Collection, Hashable, Iterable, Sequence
from typing import Any, Generic, TypeVar, cast

from pi_context.messages import AgentMessage, now_ms
from pi_context.prompt import apply_forced_prompt

__all__ = [
    "ContextPhase",
    "PrefixFlatMap",
    "TransformChain",
    "common_prefix",
    "force_prompt",
    "hide_declarations",
]


# -- the transform chain ---------------------------------------------------------------------------


ContextPhase = Callable[[Sequence[AgentMessage]], Awaitable[list[AgentMessage]]]
"""Phases 1 and 2 of the chain: an extension runner's ``emit_context``."""


def _hide_in(message: AgentMessage, hidden: Collection[str]) -> AgentMessage:
    """``message`` without the hidden names in its tool declarations (itself when untouched)."""
    if message.get("role") != "system" or not (
        "toolsAdded" in message or "toolsRemoved" in message
    ):
        return message
    msg = dict(cast(dict[str, Any], message))
    for key in ("toolsAdded", "toolsRemoved"):
        if key in msg:
            kept = [t for t in msg[key] if t.get("name") not in hidden]
            if kept:
                msg[key] = kept
            else:
                del msg[key]
    return cast(AgentMessage, msg)


def hide_declarations(
    messages: Sequence[AgentMessage], hidden: Collection[str]
) -> list[AgentMessage]:
    """Remove hidden tool names from every system message's tool declarations."""
    if not hidden:
        return list(messages)
    return [_hide_in(message, hidden) for message in messages]


def force_prompt(
    messages: Sequence[AgentMessage], forced: str | None, *, clock: Callable[[], int] = now_ms
) -> list[AgentMessage]:
    """The chain's last step: every system message replaced by one head with the forced prompt
    (:func:`pi_context.prompt.apply_forced_prompt`, stamped with ``clock``); ``None``: the
    messages unchanged."""
    if forced is None:
        return list(messages)
    return cast(list[AgentMessage], apply_forced_prompt(messages, forced, now=clock()))


def _is_system(_index: int, message: AgentMessage) -> tuple[AgentMessage, ...]:
    return (message,) if message.get("role") == "system" else ()


def _not_system(_index: int, message: AgentMessage) -> tuple[AgentMessage, ...]:
    return () if message.get("role") == "system" else (message,)


class TransformChain:
    """The whole chain, configured by the agent session and applied before every request.

    The two projections are kept incrementally: a message seen at the same position by the
    previous request is not processed again, and a request gets the very same output objects
    as the previous one where nothing changed (so the conversions and the cache fingerprint
    after the chain can reuse their work too, see :class:`PrefixFlatMap`).

    ``context_phase`` is phases 1 and 2 (an extension runner's ``emit_context``; ``None``: no
    extensions); ``hidden_tools`` and ``forced_prompt`` are read before every request.
    """

    __slots__ = (
        "_head",
        "_hidden",
        "_hidden_view",
        "_rest",
        "_systems",
        "clock",
        "context_phase",
        "forced_prompt",
        "hidden_tools",
    )

    def __init__(
        self,
        context_phase: ContextPhase | None = None,
        hidden_tools: Callable[[], Collection[str]] = lambda: (),
        forced_prompt: Callable[[], str | None] = lambda: None,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.context_phase = context_phase
        self.hidden_tools = hidden_tools
        self.forced_prompt = forced_prompt
        self.clock = clock
        self._hidden: frozenset[str] = frozenset()
        self._hidden_view: PrefixFlatMap[AgentMessage, AgentMessage] = PrefixFlatMap(
            lambda _i, m: (_hide_in(m, self._hidden),)
        )
        self._systems: PrefixFlatMap[AgentMessage, AgentMessage] = PrefixFlatMap(_is_system)
        self._rest: PrefixFlatMap[AgentMessage, AgentMessage] = PrefixFlatMap(_not_system)
        self._head: tuple[str, list[AgentMessage], AgentMessage] | None = None

    async def __call__(self, messages: Sequence[AgentMessage]) -> list[AgentMessage]:
        if self.context_phase is not None:
            current = await self.context_phase(messages)
        else:
            current = list(messages)
        hidden = frozenset(self.hidden_tools())
        if hidden:
            if hidden != self._hidden:
                self._hidden = hidden
                self._hidden_view.clear()
            current = self._hidden_view(current)
        forced = self.forced_prompt()
        if forced is None:
            return current
        return [self._forced_head(self._systems(current), forced), *self._rest(current)]

    def _forced_head(self, systems: list[AgentMessage], forced: str) -> AgentMessage:
        """:func:`force_prompt`'s head, the same object while its inputs are unchanged
        (a head stamped with the clock, for lack of system messages, is always new)."""
        last = self._head
        if (
            last is not None
            and last[0] == forced
            and len(last[1]) == len(systems)
            and all(a is b for a, b in zip(last[1], systems, strict=True))
        ):
            return last[2]
        head = force_prompt(systems, forced, clock=self.clock)[0]
        self._head = (forced, systems, head) if systems else None
        return head


# -- prefix reuse ----------------------------------------------------------------------------------


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
