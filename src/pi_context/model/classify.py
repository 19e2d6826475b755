"""Classifying provider failures: context overflow, transient, authentication, other.

The agent loop decides what to do after a failed request from one word, ``ProviderError.kind``:

* ``context_overflow`` -> compact and retry once (pi's overflow recovery);
* ``transient`` -> back off and retry (429, 5xx, a dropped connection, a cut stream);
* ``authentication`` -> stop and tell the user to configure a key;
* ``other`` -> report.

The overflow phrases are the ones pi 1.6.0 recognizes across providers (``isContextOverflow``);
:func:`is_context_overflow` also implements pi's *silent overflow* (a completed response whose
input exceeded the window) and the length-stop overflow, which only a usage report reveals.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping

from pi_context.errors import ProviderError, ProviderErrorKind
from pi_context.messages import AssistantMessage

__all__ = [
    "classify_message",
    "classify_status",
    "is_context_overflow",
    "is_overflow_text",
    "is_transient_text",
    "make_error",
    "parse_retry_after",
]


class _Pattern:
    """A regular expression compiled when first used: these are read only when a request
    fails, and compiling them all would lengthen every start-up (benchmarks/README.md,
    "Start-up")."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def search(self, text: str) -> re.Match[str] | None:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled.search(text)


# Errors that mention limits but are about rate or availability, never about the window.
_NOT_OVERFLOW = _Pattern(
    r"^(throttling error|service unavailable):|rate limit|too many requests", re.IGNORECASE
)

_OVERFLOW = _Pattern(
    "|".join(
        [
            r"prompt is too long",
            r"prompt too long",
            r"request_too_large",
            r"input is too long for requested model",
            r"exceeds the context window",
            r"exceeds (?:the )?(?:model'?s )?maximum context length",
            r"context window exceeded",
            r"input token count.*exceeds the maximum",
            r"maximum prompt length is \d+",
            r"reduce the length of the messages",
            r"maximum context length is \d+ tokens",
            r"exceeds (?:the )?maximum allowed input length",
            r"input \(\d+ tokens\) is longer than the model'?s context length",
            r"exceeds the limit of \d+",
            r"exceeds the available context size",
            r"greater than the context length",
            r"context window exceeds limit",
            r"exceeded model token limit",
            r"too large for model with \d+ maximum context length",
            r"prompt has \d+ tokens, but the configured context size is \d+",
            r"model_context_window_exceeded",
            r"prompt too long; exceeded (?:max )?context length",
            r"range of input length should be",
            r"context[_ ]length[_ ]exceeded",
            r"too many tokens",
            r"token limit exceeded",
            r"api error \(413\)",
            r"^\s*413\b",
        ]
    ),
    re.IGNORECASE | re.DOTALL,
)

_CEREBRAS_OVERFLOW = _Pattern(r"^\s*(?:400|413) (?:status code )?\(no body\)", re.IGNORECASE)

# Quota and billing failures look like 429s but retrying cannot help.
_NOT_TRANSIENT = _Pattern(
    r"insufficient_quota|out of budget|quota exceeded|exceeded your current quota|billing"
    r"|monthly usage limit|available balance|usage limit",
    re.IGNORECASE,
)

_TRANSIENT = _Pattern(
    "|".join(
        [
            r"overloaded",
            r"server (?:is )?busy",
            r"high demand",
            r"at capacity",
            r"rate.?limit",
            r"too many requests",
            r"\b(?:429|500|502|503|504|520|524)\b",
            r"service (?:temporarily )?unavailable",
            r"(?:server|internal) error",
            r"provider returned error",
            r"upstream",
            r"(?:network|connection) (?:error|refused|lost|closed|reset)",
            r"other side closed",
            r"fetch failed",
            r"getaddrinfo",
            r"econnreset|econnaborted|econnrefused|etimedout|epipe|enotfound|eai_again",
            r"socket hang up",
            r"timed? ?out",
            r"terminated",
            r"premature|incomplete (?:message|stream|chunked)|stream ended|peer closed",
            r"please retry|try again",
            r"resourceexhausted|resource_exhausted",
        ]
    ),
    re.IGNORECASE,
)

_AUTH = _Pattern(
    r"invalid (?:x-)?api[ _-]?key|incorrect api key|authentication|unauthori[sz]ed"
    r"|permission denied|failed to resolve api key|no api key",
    re.IGNORECASE,
)


def is_overflow_text(message: str, provider: str | None = None) -> bool:
    """True when an error message says the prompt did not fit the context window."""
    if _NOT_OVERFLOW.search(message):
        return False
    if _OVERFLOW.search(message):
        return True
    return provider == "cerebras" and bool(_CEREBRAS_OVERFLOW.search(message))


def is_transient_text(message: str) -> bool:
    """True when an error message describes a failure worth retrying (pi's retryable rule)."""
    if not message or _NOT_TRANSIENT.search(message):
        return False
    return bool(_TRANSIENT.search(message))


def is_context_overflow(message: AssistantMessage, context_window: int | None = None) -> bool:
    """pi's ``isContextOverflow``: an overflow error, or (given the window) a silent overflow.

    Silent overflow: the response completed (``stop``) but ``input + cacheRead`` exceeds the
    window, so the provider quietly dropped part of the prompt. Length-stop overflow: the
    response stopped for length before producing anything while the input filled 99% of it.
    """
    stop = message.get("stopReason")
    if stop == "error":
        return is_overflow_text(message.get("errorMessage") or "", message.get("provider"))
    if not context_window:
        return False
    usage = message["usage"]
    seen = int(usage.get("input", 0)) + int(usage.get("cacheRead", 0))
    if stop == "stop":
        return seen > context_window
    if stop == "length":
        return int(usage.get("output", 0)) == 0 and seen >= 0.99 * context_window
    return False


def classify_status(status: int | None) -> ProviderErrorKind | None:
    """The kind an HTTP status implies on its own, if any."""
    if status is None:
        return None
    if status in (401, 403):
        return "authentication"
    if status == 413:
        return "context_overflow"
    if status in (408, 409, 425, 429) or status >= 500:
        return "transient"
    return None


def classify_message(
    message: str, status: int | None = None, provider: str | None = None
) -> ProviderErrorKind:
    """Classify a failure from its text and HTTP status; overflow wins over everything."""
    if is_overflow_text(message, provider):
        return "context_overflow"
    if status is not None and status == 429 and _NOT_TRANSIENT.search(message):
        return "other"
    by_status = classify_status(status)
    if by_status is not None:
        return by_status
    if _AUTH.search(message):
        return "authentication"
    if is_transient_text(message):
        return "transient"
    return "other"


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = lowered.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        import email.utils  # a Retry-After date: rare

        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def make_error(
    message: str,
    *,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
    provider: str | None = None,
    kind: ProviderErrorKind | None = None,
) -> ProviderError:
    """A classified :class:`ProviderError` (``kind`` forced when given)."""
    return ProviderError(
        message,
        kind=kind or classify_message(message, status, provider),
        status=status,
        retry_after=parse_retry_after(headers),
    )
