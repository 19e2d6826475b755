"""The transform-context chain applied to every model request (spec hooks.md §2).

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
from dataclasses import dataclass, field
from typing import Any, cast

from pi_context.messages import AgentMessage, now_ms
from pi_context.prompt import apply_forced_prompt as _forced_projection
from pi_context.prompt import get_current_system_message

__all__ = [
    "ContextPhase",
    "TransformChain",
    "apply_forced_prompt",
    "current_system_message",
    "hide_declarations",
]

ContextPhase = Callable[[Sequence[AgentMessage]], Awaitable[list[AgentMessage]]]
"""Phases 1 and 2 of the chain: an extension runner's ``emit_context``."""

current_system_message = get_current_system_message
"""The replayed prompt and tool state of a transcript (pi's ``getCurrentSystemMessage``)."""


def hide_declarations(
    messages: Sequence[AgentMessage], hidden: Collection[str]
) -> list[AgentMessage]:
    """Remove hidden tool names from every system message's tool declarations."""
    if not hidden:
        return list(messages)
    out: list[AgentMessage] = []
    for message in messages:
        if message.get("role") != "system" or not (
            "toolsAdded" in message or "toolsRemoved" in message
        ):
            out.append(message)
            continue
        msg = dict(cast(dict[str, Any], message))
        for key in ("toolsAdded", "toolsRemoved"):
            if key in msg:
                kept = [t for t in msg[key] if t.get("name") not in hidden]
                if kept:
                    msg[key] = kept
                else:
                    del msg[key]
        out.append(cast(AgentMessage, msg))
    return out


def apply_forced_prompt(
    messages: Sequence[AgentMessage], forced: str | None, *, clock: Callable[[], int] = now_ms
) -> list[AgentMessage]:
    """Replace every system message by one head with the forced prompt (``None``: unchanged)."""
    if forced is None:
        return list(messages)
    return cast(list[AgentMessage], _forced_projection(messages, forced, now=clock()))


@dataclass
class TransformChain:
    """The whole chain, configured by the agent session and applied before every request."""

    context_phase: ContextPhase | None = None
    """Phases 1 and 2 (an extension runner's ``emit_context``); ``None``: no extensions."""
    hidden_tools: Callable[[], Collection[str]] = field(default=lambda: ())
    forced_prompt: Callable[[], str | None] = field(default=lambda: None)
    clock: Callable[[], int] = now_ms

    async def __call__(self, messages: Sequence[AgentMessage]) -> list[AgentMessage]:
        if self.context_phase is not None:
            current = await self.context_phase(messages)
        else:
            current = list(messages)
        current = hide_declarations(current, self.hidden_tools())
        return apply_forced_prompt(current, self.forced_prompt(), clock=self.clock)
