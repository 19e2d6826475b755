"""The transform-context chain applied to every model request.

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
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any, cast

from pi_context.messages import AgentMessage, now_ms
from pi_context.prompt import apply_forced_prompt

from .prefix_reuse import PrefixFlatMap

__all__ = [
    "ContextPhase",
    "TransformChain",
    "force_prompt",
    "hide_declarations",
]

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
    after the chain can reuse their work too, see :mod:`.prefix_reuse`).

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
