"""The output cap of a request: the requested limit (else the model's), clamped to the window.

pi-ai clamps every request's output limit to what is left of the context window once the input
is in: ``margin = max(4096, ceil(input × 0.15))``, ``room = window −
input − margin``, and when ``room < 32768`` then ``room = min(32768, window − input − 4096)``;
the limit is ``min(requested or model max, max(1, room))``. Without it a long conversation on a
model whose ``max_tokens`` is large (64k on Claude, 128k on GPT-5) asks for more output than the
window can hold, and APIs that count input plus output against the window refuse the request.

``input`` is the request-side estimate (:func:`estimate_request_tokens`): as in pi-ai, the
provider's reported usage of the last assistant response that still describes the current
prefix plus an estimate of each message after it; with no such response, 3.5 characters a token
over everything.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, cast

from pi_context._json import js_stringify, utf16_len
from pi_context.model import ModelInfo, ModelRequest
from pi_context.tokens import calculate_context_tokens, estimate_chars, has_valid_usage

__all__ = ["clamp_output_to_context", "estimate_request_tokens", "output_cap"]


CHARS_PER_TOKEN = 3.5
"""pi-ai's request-side estimate; on code it runs high (benchmarks/README.md, economy finding
15)."""
MIN_TOKENS_PER_CHAR = 0.25
"""The least a character of the trailing messages counts for (pi's compaction estimate)."""
MIN_PLAUSIBLE_TOKENS_PER_CHAR = 0.125
"""A usage under 1 token per 8 characters of its prefix does not describe it (the prefix grew
in a way no timestamp shows: restored tool output, a larger system prompt; or the server
reported no input tokens): the estimate falls back to counting characters."""


def _message_tokens(message: Mapping[str, Any]) -> int:
    return math.ceil(estimate_chars(message) / CHARS_PER_TOKEN)


def _counted_here(message: Mapping[str, Any], info: ModelInfo | None) -> bool:
    """A finished reply with a usage, counted by this model's tokenizer."""
    if not has_valid_usage(message):
        return False
    if info is None:
        return True
    return message.get("provider") == info.provider and message.get("model") == info.id


def _usage_index(
    messages: Sequence[Mapping[str, Any]], info: ModelInfo | None = None
) -> int | None:
    """The last assistant message whose usage describes the current prefix (pi-ai's rule).

    A response's usage counted everything before it. When a message with a newer timestamp sits
    before it (a compaction summary, which is newer than the tail it keeps), that prefix is gone
    and the usage describes a context that no longer exists, so the response is passed over.
    With ``info``, only replies of that model count (another model's tokenizer may count the
    same prefix markedly lower: benchmarks/README.md, "Figures the code points to").
    """
    latest = -math.inf
    found: int | None = None
    for index, message in enumerate(messages):
        stamp = message.get("timestamp")
        at = stamp if isinstance(stamp, int | float) and not isinstance(stamp, bool) else None
        if _counted_here(message, info) and (at is None or at >= latest):
            found = index
        if at is not None:
            latest = max(latest, at)
    return found


def _fixed_chars(request: ModelRequest) -> int:
    """The system prompt and the tool declarations, in characters."""
    chars = utf16_len(request.system_prompt or "")
    if request.tools:
        chars += utf16_len(js_stringify(list(request.tools)))
    return chars


def _by_characters(request: ModelRequest) -> int:
    tokens = sum(_message_tokens(m) for m in request.messages)
    return tokens + math.ceil(_fixed_chars(request) / CHARS_PER_TOKEN)


def estimate_request_tokens(request: ModelRequest, info: ModelInfo | None = None) -> int:
    """The request's input, estimated before choosing the output cap.

    Like pi-ai: the usage the provider reported for the last response that still describes the
    prefix, plus an estimate of every message after it. Unlike pi-ai, the messages after it
    count at the prefix's own measured rate (its reported tokens over its characters, never
    under 1 token per 4 characters) instead of a flat 3.5 characters a token: that flat rate
    runs high on code, so a large tool result made the context look fuller than
    it was, the cap (and Anthropic's thinking budget with it) was cut for one request and
    restored on the next, and each change of the budget voids Anthropic's cached messages
    (benchmarks/README.md, economy finding 15). Text denser than the prefix's rate (CJK,
    minified data) is still under-counted, by less than at 3.5 characters a token when the
    prefix is dense too. Without such a response: 3.5 characters a token over the messages
    and, unlike pi-ai, over the system prompt and tool declarations, so a first request is
    not estimated a few thousand tokens short.

    With ``info`` (the model the request goes to) only that model's replies count. A usage
    under 1 token per 8 characters of its prefix is not trusted either
    (:data:`MIN_PLAUSIBLE_TOKENS_PER_CHAR`): the estimate is then the character count.
    """
    messages = request.messages
    index = _usage_index(messages, info)
    if index is None:
        return _by_characters(request)
    usage = int(calculate_context_tokens(cast(Mapping[str, Any], messages[index])["usage"]))
    prefix_chars = _fixed_chars(request) + sum(estimate_chars(m) for m in messages[: index + 1])
    if usage < prefix_chars * MIN_PLAUSIBLE_TOKENS_PER_CHAR:
        return _by_characters(request)
    rate = max(MIN_TOKENS_PER_CHAR, usage / prefix_chars) if prefix_chars else 1 / CHARS_PER_TOKEN
    trailing = sum(math.ceil(estimate_chars(m) * rate) for m in messages[index + 1 :])
    return usage + trailing


def clamp_output_to_context(info: ModelInfo, input_tokens: int, limit: int) -> int:
    """``limit`` reduced to the room the window leaves after ``input_tokens`` (pi's rule)."""
    window = info.context_window
    if window <= 0:
        return limit
    margin = max(4096, math.ceil(input_tokens * 0.15))
    room = window - input_tokens - margin
    if room < 32768:
        room = min(32768, window - input_tokens - 4096)
    return min(limit, max(1, room))


def output_cap(info: ModelInfo, request: ModelRequest) -> int:
    """The output limit to send: requested (else the model's), clamped to the window."""
    limit = request.options.max_tokens or info.max_tokens
    return clamp_output_to_context(info, estimate_request_tokens(request, info), limit)
