"""The transform-context chain applied to every model request (spec hooks.md §2).

In application order:

1. extension ``context`` handlers: each sees the conversation **without** system messages; when a
   handler changes the list, the prompt/tool state is restored as one replayed system head before
   the handler's messages, so no handler can drop it (phase 1); then ``context_with_system``
   handlers see and own the full transcript (phase 2);
2. the hidden-declarations projection: names of hidden tools are removed from the ``toolsAdded`` /
   ``toolsRemoved`` of every system message;
3. the forced prompt: when a run forces a system prompt, all system messages are replaced by one
   head carrying the forced text and the current tool declarations.

Nothing in the chain reaches the stored session: handlers get a deep copy, and the two
projections build new messages instead of editing the ones they are given.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from pi_context.messages import AgentMessage, SystemMessage, now_ms
from pi_context.prompt import get_current_system_message

__all__ = [
    "ContextHandler",
    "ErrorReporter",
    "NamedHandler",
    "TransformChain",
    "apply_forced_prompt",
    "current_system_message",
    "hide_declarations",
    "run_context_handlers",
]

ContextHandler = Callable[
    [list[AgentMessage]], "Awaitable[list[AgentMessage] | None] | list[AgentMessage] | None"
]
"""A handler gets the message list and returns a new list, or ``None`` (possibly after editing
the list it was given in place)."""

ErrorReporter = Callable[[str, str | None, BaseException], None]
"""Called with (event name, extension name, exception) when a handler raises."""


@dataclass(frozen=True, slots=True)
class NamedHandler:
    """A handler and the extension it came from (for error reports)."""

    handler: ContextHandler
    extension: str | None = None


def current_system_message(messages: Sequence[AgentMessage]) -> SystemMessage | None:
    """The replayed prompt and tool state of ``messages`` (pi's ``getCurrentSystemMessage``).

    Later ``content`` is appended, sections are patched by name (``None`` deletes; a re-added
    section moves to the end), tools are removed then added by name; the timestamp is the first
    system message's.
    """
    return get_current_system_message(messages)


async def _call(handler: ContextHandler, messages: list[AgentMessage]) -> list[AgentMessage] | None:
    result = handler(messages)
    if inspect.isawaitable(result):
        result = await result
    return result


def _same_elements(a: Sequence[object], b: Sequence[object]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


async def run_context_handlers(
    messages: Sequence[AgentMessage],
    context: Sequence[NamedHandler],
    context_with_system: Sequence[NamedHandler] = (),
    *,
    on_error: ErrorReporter | None = None,
) -> list[AgentMessage]:
    """Phase 1 (``context``) and phase 2 (``context_with_system``) of the chain.

    Handlers work on a deep copy, so nothing they do reaches the stored messages; without
    handlers the messages pass through as a new list (nothing later in the chain mutates them).
    """
    if not context and not context_with_system:
        return list(messages)
    current: list[AgentMessage] = copy.deepcopy(list(messages))
    for named in context:
        visible = [m for m in current if m.get("role") != "system"]
        snapshot = list(visible)
        try:
            result = await _call(named.handler, visible)
        except Exception as exc:  # noqa: BLE001 - extension code: report and go on
            if on_error is not None:
                on_error("context", named.extension, exc)
            continue
        if result is not None:
            returned = list(result)
        elif not _same_elements(visible, snapshot):
            returned = visible
        else:
            continue
        if _same_elements(returned, snapshot):
            continue
        head = current_system_message(current)
        current = ([head] if head is not None else []) + returned
    for named in context_with_system:
        started_with_system = bool(current) and current[0].get("role") == "system"
        try:
            result = await _call(named.handler, current)
        except Exception as exc:  # noqa: BLE001 - extension code: report and go on
            if on_error is not None:
                on_error("context_with_system", named.extension, exc)
            continue
        if result is not None:
            current = list(result)
        lost_head = started_with_system and not (current and current[0].get("role") == "system")
        if lost_head and on_error is not None:
            on_error(
                "context_with_system",
                named.extension,
                ValueError("the handler removed the leading system message"),
            )
    return current


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
    state = current_system_message(messages)
    head: dict[str, Any] = {"role": "system", "content": forced}
    if state is not None and state.get("toolsAdded"):
        head["toolsAdded"] = state["toolsAdded"]
    head["timestamp"] = state["timestamp"] if state is not None else clock()
    rest = [m for m in messages if m.get("role") != "system"]
    return [cast(AgentMessage, head), *rest]


@dataclass
class TransformChain:
    """The whole chain, configured by the agent session and applied before every request."""

    context: Sequence[NamedHandler] = ()
    context_with_system: Sequence[NamedHandler] = ()
    hidden_tools: Callable[[], Collection[str]] = field(default=lambda: ())
    forced_prompt: Callable[[], str | None] = field(default=lambda: None)
    on_error: ErrorReporter | None = None
    clock: Callable[[], int] = now_ms
    context_phase: Callable[[Sequence[AgentMessage]], Awaitable[list[AgentMessage]]] | None = None
    """When set (an extension runner's ``emit_context``), it runs phases 1 and 2 instead of
    ``context``/``context_with_system``; it must copy as :func:`run_context_handlers` does."""

    async def __call__(self, messages: Sequence[AgentMessage]) -> list[AgentMessage]:
        if self.context_phase is not None:
            current = await self.context_phase(messages)
        else:
            current = await run_context_handlers(
                messages, self.context, self.context_with_system, on_error=self.on_error
            )
        current = hide_declarations(current, self.hidden_tools())
        return apply_forced_prompt(current, self.forced_prompt(), clock=self.clock)
