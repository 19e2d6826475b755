"""The one retry policy for model calls: which failures to retry, and how long to wait.

Compaction's summary requests and the agent's automatic retries both ask a
:class:`RetryPolicy`; its limits are pi's ``retry`` settings
(:class:`~pi_context.resources.settings.RetrySettings`, resolved from settings.json by
:func:`~pi_context.resources.settings.retry_settings_for`).

A failure is worth retrying when the response stopped with ``error`` and the provider
classified it ``transient`` or its text matches one of pi's transient phrases; quota and
billing problems are never retried, even when a provider calls them transient, and neither are
authentication failures, aborts and context overflows (overflow has its own recovery).
Backoff is ``baseDelayMs * 2^(attempt-1)``, capped at ``maxAgentDelayMs``; a provider's
``Retry-After`` replaces the computed delay when the caller passes it, under the same cap.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from msgspec import Struct, field

from pi_context.errors import ProviderError
from pi_context.model.classify import is_overflow_text, is_transient_text
from pi_context.resources.settings import RetrySettings

__all__ = ["RetryPolicy", "is_retryable"]

# Quota and billing problems are never retried, even when a provider calls them transient.
_QUOTA_HINT = re.compile(
    r"insufficient_quota|out of budget|quota exceeded|billing|usage limit|available balance",
    re.IGNORECASE,
)
_NEVER_RETRIED = frozenset({"authentication", "aborted", "context_overflow"})


def is_retryable(message: Mapping[str, Any], error: ProviderError | None = None) -> bool:
    """Whether a failed response is worth retrying (a transient error, not a quota problem).

    ``message`` is the final assistant message; ``error`` the provider's classified failure
    when there is one. A response that did not stop with ``error`` is never retried.
    """
    if message.get("stopReason") != "error":
        return False
    text = str(message.get("errorMessage") or (str(error) if error else ""))
    if not text:
        return False
    if error is not None and error.kind in _NEVER_RETRIED:
        return False
    if is_overflow_text(text, message.get("provider")):
        return False  # the same prompt would overflow again; overflow has its own recovery
    if error is not None and error.kind == "transient":
        return not _QUOTA_HINT.search(text)
    return is_transient_text(text)


class RetryPolicy(Struct, frozen=True):
    """Retries of transient model failures under pi's ``retry`` settings.

    Use :meth:`should_retry` after a failed call (``attempts`` is how many retries were already
    made) and :meth:`delay_ms` for the wait before retry number ``attempt`` (1-based).
    """

    settings: RetrySettings = field(default_factory=RetrySettings)

    @property
    def max_attempts(self) -> int:
        """Retries allowed after the first call (0 when retries are disabled)."""
        return self.settings.max_retries if self.settings.enabled else 0

    def delay_ms(self, attempt: int, retry_after: float | None = None) -> int:
        """Milliseconds to wait before retry ``attempt`` (1-based).

        ``base * 2^(attempt-1)``, or ``retry_after`` seconds when the provider said so; either
        is capped at ``max_delay_ms``.
        """
        cap = self.settings.max_delay_ms
        if retry_after is not None:
            return int(min(retry_after * 1000, cap))
        return int(min(self.settings.base_delay_ms * 2 ** (attempt - 1), cap))

    def should_retry(
        self, message: Mapping[str, Any], error: ProviderError | None, attempts: int
    ) -> bool:
        """Whether to retry a call whose final message is ``message``, ``attempts`` retries in."""
        return attempts < self.max_attempts and is_retryable(message, error)
