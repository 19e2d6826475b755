"""One summarization request: model call, retries with backoff, and pi's failure rules.

A standalone summary request never declares tools and never writes the prompt cache
(``RequestOptions(cache="none")``); a shared one (:func:`shared_summary_request`) is the
conversation's own request plus one user message, so that its input is read from the cache. Transient errors are retried as the one
:class:`~pi_context.model.retry.RetryPolicy` says (``retry.max_retries`` times, exponential
backoff); anything else, an ``error`` or ``length`` stop, a tool call in the reply or a reply
with no text is a failure (:class:`~pi_context.errors.CompactionError`). Cancellation is asyncio
cancellation and stops at once, including during a backoff sleep.

On a small window (below :data:`SMALL_WINDOW` tokens) the output limit is not pi's: pi keeps a
fixed 4096-token margin and clamps the output to what is left, which at a 4k or 8k window leaves
a handful of tokens (often 1) and every request fails with a ``length`` stop. There the output
gets a fixed share of the window (a quarter, at most the model's own limit) and the margin is an
eighth of the window; :func:`fit_summary_prompt` shortens the transcript (its middle) instead, so
that the prompt and that output fit.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

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
    "SMALL_WINDOW",
    "SummaryResult",
    "combine_usage",
    "fit_summary_prompt",
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


SMALL_WINDOW: Final = 32_768
"""Windows below this many tokens size a summary request by :func:`fit_summary_prompt`'s rule."""

_CHARS_PER_TOKEN: Final = 3.5
_ELISION_NOTE: Final = (
    "\n\n[... {count} characters of the conversation left out to fit the window]\n\n"
)


def _estimate_input(prompt_chars: int) -> int:
    """pi-ai's request-side estimate: the prompt and the system prompt at 3.5 chars a token."""
    return math.ceil((prompt_chars + len(SUMMARY_SYSTEM_PROMPT)) / _CHARS_PER_TOKEN)


def _small_window_budget(window: int, model_max: int) -> tuple[int, int]:
    """(output, margin) of a summary request on a small window."""
    output = window // 4
    if model_max > 0:
        output = min(output, model_max)
    return output, window // 8


def summary_max_tokens(model: Model, prompt_chars: int) -> int | None:
    """The output limit pi-ai would use: the model's max, clamped to what fits the window.

    ``prompt_chars`` is the prompt's JavaScript length; input is estimated at 3.5 chars a token.
    On a window below :data:`SMALL_WINDOW` the margin is an eighth of the window instead of pi's
    4096 tokens (see the module's docstring).
    """
    info = model.info
    window = info.context_window
    if window <= 0:
        return None
    estimated_input = _estimate_input(prompt_chars)
    if window < SMALL_WINDOW:
        _output, margin = _small_window_budget(window, info.max_tokens)
        room = window - estimated_input - margin
    else:
        margin = max(4096, math.ceil(estimated_input * 0.15))
        room = window - estimated_input - margin
        if room < 32768:
            room = min(32768, window - estimated_input - 4096)
    return min(info.max_tokens, max(1, room)) if info.max_tokens > 0 else max(1, room)


def fit_summary_prompt(model: Model, serialized: str, build: Callable[[str], str]) -> str:
    """``build(serialized)``, with the middle of ``serialized`` left out if the window is small.

    On a window of :data:`SMALL_WINDOW` tokens or more this is ``build(serialized)`` unchanged
    (pi's request). Below it, the prompt must leave room for a quarter of the window (at most the
    model's output limit) plus a margin of an eighth; if it does not, the transcript keeps its
    first third and its last two thirds of what fits, with a note of how many characters were
    left out between them. The instructions (and a previous summary) are never shortened; if
    they alone do not fit, the transcript is left out whole and the request is sent as it is.
    """
    prompt = build(serialized)
    info = model.info
    window = info.context_window
    if not 0 < window < SMALL_WINDOW:
        return prompt
    output, margin = _small_window_budget(window, info.max_tokens)
    allowed = math.floor((window - output - margin) * _CHARS_PER_TOKEN) - len(SUMMARY_SYSTEM_PROMPT)
    excess = utf16_len(prompt) - allowed
    if excess <= 0:
        return prompt
    # lengths in code points: each is at least one UTF-16 unit, so cutting ``excess`` code
    # points (plus the note) takes out at least ``excess`` units
    note = _ELISION_NOTE.format(count=len(serialized))
    keep = len(serialized) - excess - len(note)
    if keep <= 0:
        return build(note.strip())
    head = keep // 3
    tail = keep - head
    left_out = len(serialized) - head - tail
    note = _ELISION_NOTE.format(count=left_out)
    return build(serialized[:head] + note + serialized[len(serialized) - tail :])


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
