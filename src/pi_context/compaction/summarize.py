"""One summarization request: model call, retries with backoff, and pi's failure rules.

A standalone summary request never declares tools and never writes the prompt cache
(``RequestOptions(cache="none")``); a shared one (:func:`shared_summary_request`) is the
conversation's own request plus one user message, so that its input is read from the cache. Transient errors are retried as the one
:class:`~pi_context.model.retry.RetryPolicy` says (``retry.max_retries`` times, exponential
backoff); anything else, an ``error`` or ``length`` stop, a tool call in the reply or a reply
with no text is a failure (:class:`~pi_context.errors.CompactionError`). Cancellation is asyncio
cancellation and stops at once, including during a backoff sleep.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from pi_context._json import utf16_len
from pi_context.compaction.prompts import SUMMARY_SYSTEM_PROMPT, shared_summary_prompt
from pi_context.compaction.retry_events import (
    CompactionReason,
    SummarizationRetryAttemptStart,
    SummarizationRetryEvent,
    SummarizationRetryFinished,
    SummarizationRetryScheduled,
    SummarySource,
)
from pi_context.errors import CompactionCancelledError, CompactionError
from pi_context.messages import ThinkingLevel, Usage, empty_usage, text_of, user_message
from pi_context.model import Model, ModelRequest, RequestOptions, complete
from pi_context.model.retry import RetryPolicy
from pi_context.resources.settings import RetrySettings
from pi_context.session.store import new_session_id

__all__ = [
    "SummaryResult",
    "combine_usage",
    "request_summary",
    "shared_summary_request",
    "summary_max_tokens",
]


@dataclass(frozen=True, slots=True)
class SummaryResult:
    text: str
    usage: Usage


def combine_usage(a: Mapping[str, Any], b: Mapping[str, Any]) -> Usage:
    """Sum two usages field by field (cost parts too), as pi does for split-turn summaries."""
    out: dict[str, Any] = {}
    for key in ("input", "output", "cacheRead", "cacheWrite"):
        out[key] = a.get(key, 0) + b.get(key, 0)
    for key in ("cacheWrite1h", "reasoning"):
        if key in a or key in b:
            out[key] = a.get(key, 0) + b.get(key, 0)
    out["totalTokens"] = a.get("totalTokens", 0) + b.get("totalTokens", 0)
    cost_a = a.get("cost") or {}
    cost_b = b.get("cost") or {}
    cost: dict[str, Any] = {
        key: cost_a.get(key, 0) + cost_b.get(key, 0)
        for key in ("input", "output", "cacheRead", "cacheWrite", "total")
    }
    if "totalFromProvider" in cost_a and "totalFromProvider" in cost_b:
        # a boolean: the total is the provider's own only if both parts' were
        cost["totalFromProvider"] = bool(
            cost_a["totalFromProvider"] and cost_b["totalFromProvider"]
        )
    out["cost"] = cost
    return out  # type: ignore[return-value]


def summary_max_tokens(model: Model, prompt_chars: int) -> int | None:
    """The output limit pi-ai would use: the model's max, clamped to what fits the window.

    ``prompt_chars`` is the prompt's JavaScript length; input is estimated at 3.5 chars a token.
    """
    info = model.info
    window = info.context_window
    if window <= 0:
        return None
    estimated_input = math.ceil((prompt_chars + len(SUMMARY_SYSTEM_PROMPT)) / 3.5)
    margin = max(4096, math.ceil(estimated_input * 0.15))
    room = window - estimated_input - margin
    if room < 32768:
        room = min(32768, window - estimated_input - 4096)
    return min(info.max_tokens, max(1, room)) if info.max_tokens > 0 else max(1, room)


def shared_summary_request(
    conversation: ModelRequest, custom_instructions: str | None = None
) -> ModelRequest:
    """``conversation`` (the request the agent would send now) continued by the summary
    instructions: the same tools, system prompt, options and messages, so that a provider's
    prompt cache serves everything but the instructions."""
    instructions = user_message(shared_summary_prompt(custom_instructions))
    return replace(conversation, messages=[*conversation.messages, instructions])


async def request_summary(
    model: Model,
    prompt: str,
    *,
    request: ModelRequest | None = None,
    label: str,
    source: SummarySource = "compaction",
    reason: CompactionReason | None = None,
    retry: RetrySettings | None = None,
    thinking_level: ThinkingLevel = "off",
    on_event: Callable[[SummarizationRetryEvent], None] | None = None,
    sleep: Callable[[float], Awaitable[Any]] | None = None,
) -> SummaryResult:
    """Ask ``model`` for a summary of ``prompt``; raise :class:`CompactionError` on failure.

    ``label`` names the request in error messages (``Summarization``, ``Turn prefix
    summarization``, ``Branch summarization``); ``source`` and ``reason`` (a compaction's)
    are reported with a retry. ``sleep`` replaces ``asyncio.sleep`` (tests). ``request``,
    when given, is sent instead of the standalone request over ``prompt``
    (:func:`shared_summary_request`).
    """
    policy = RetryPolicy(retry or RetrySettings())
    do_sleep = sleep or asyncio.sleep
    emit = on_event or (lambda _event: None)
    level: ThinkingLevel = thinking_level if model.info.reasoning else "off"
    request = request or ModelRequest(
        messages=[user_message(prompt)],
        system_prompt=SUMMARY_SYSTEM_PROMPT,
        options=RequestOptions(
            max_tokens=summary_max_tokens(model, utf16_len(prompt)),
            cache="none",
            thinking_level=level,
            # a fresh routing id per summary, as pi: never the conversation's cache key
            session_id=new_session_id(),
        ),
    )
    attempt = 0
    max_attempts = policy.max_attempts
    while True:
        done = await complete(model, request)
        message = done.message
        stop = message.get("stopReason")
        if policy.should_retry(message, done.error, attempt):
            attempt += 1
            delay = policy.delay_ms(attempt)
            error_text = str(message.get("errorMessage") or done.error or "")
            emit(SummarizationRetryScheduled(attempt, max_attempts, delay, error_text))
            await do_sleep(delay / 1000)
            emit(SummarizationRetryAttemptStart(source, reason, label=label))
            continue
        if attempt:
            emit(
                SummarizationRetryFinished(
                    stop not in ("error", "aborted"),
                    attempt,
                    str(message.get("errorMessage")) if stop == "error" else None,
                )
            )
        break
    if stop == "aborted":
        raise CompactionCancelledError(f"{label} was aborted")
    if stop == "error":
        detail = message.get("errorMessage") or (str(done.error) if done.error else "Unknown error")
        raise CompactionError(f"{label} failed: {detail}")
    if stop == "length":
        raise CompactionError(
            f"{label} failed: generation hit the token cap and the summary is incomplete"
        )
    if any(block.get("type") == "toolCall" for block in message.get("content", [])):
        raise CompactionError(f"{label} attempted to call a tool")
    text = text_of(message.get("content"), "\n")
    if not text.strip():
        # an empty reply is no summary: writing it would replace the history by nothing
        raise CompactionError(f"{label} failed: the model returned an empty summary")
    usage: Usage = message.get("usage") or empty_usage()  # type: ignore[unreachable]
    return SummaryResult(text, usage)
