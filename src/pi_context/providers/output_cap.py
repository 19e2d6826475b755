"""The output cap of a request: the requested limit (else the model's), clamped to the window.

pi-ai clamps every request's output limit to what is left of the context window once the input
is in (spec agent-parity §6.3): ``margin = max(4096, ceil(input × 0.15))``, ``room = window −
input − margin``, and when ``room < 32768`` then ``room = min(32768, window − input − 4096)``;
the limit is ``min(requested or model max, max(1, room))``. Without it a long conversation on a
model whose ``max_tokens`` is large (64k on Claude, 128k on GPT-5) asks for more output than the
window can hold, and APIs that count input plus output against the window refuse the request.

``input`` is estimated at 3.5 characters a token over the system prompt, the messages (pi's
per-message character count, :func:`pi_context.tokens.estimate_chars`) and the tool
declarations, as pi-ai estimates it.
"""

from __future__ import annotations

import math

from pi_context._json import js_stringify, utf16_len
from pi_context.model import ModelInfo, ModelRequest
from pi_context.tokens import estimate_chars

__all__ = ["clamp_output_to_context", "estimate_request_tokens", "output_cap"]


def estimate_request_tokens(request: ModelRequest) -> int:
    """The request's input, estimated at 3.5 characters a token (pi-ai's estimate)."""
    chars = utf16_len(request.system_prompt or "")
    chars += sum(estimate_chars(message) for message in request.messages)
    if request.tools:
        chars += utf16_len(js_stringify(list(request.tools)))
    return math.ceil(chars / 3.5)


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
    return clamp_output_to_context(info, estimate_request_tokens(request), limit)
