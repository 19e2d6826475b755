"""Events a compaction emits, for the agent layer to forward (to a UI, a JSON stream, extensions).

Order on success: :class:`CompactionStart` → (hook) → (retry events) → entry appended →
:class:`SessionCompact` → :class:`CompactionEnd`. On failure: :class:`CompactionStart` →
:class:`CompactionEnd` (``result=None``) → :class:`CompactionFailed` (and
:class:`CompactionPaused` when the guard pauses automatic compaction). ``will_retry`` of a
failure is always ``False``, as in pi 1.6.0.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from pi_context.compaction.prepare import CompactionPreparation
from pi_context.compaction.summarize import RetryAttemptStart, RetryFinished, RetryScheduled
from pi_context.messages import Usage
from pi_context.session.entries import Entry

__all__ = [
    "BeforeCompact",
    "BeforeCompactHook",
    "CancelCompaction",
    "CompactionEnd",
    "CompactionEvent",
    "CompactionFailed",
    "CompactionFallback",
    "CompactionPaused",
    "CompactionReason",
    "CompactionResult",
    "CompactionStart",
    "CustomCompaction",
    "ObservationsMasked",
    "SessionCompact",
]

CompactionReason = Literal["manual", "threshold", "overflow"]


@dataclass
class CompactionResult:
    """What a compaction produced (pi's result plus ``estimated_tokens_after`` and our flags)."""

    summary: str
    first_kept_entry_id: str
    tokens_before: int | None
    estimated_tokens_after: int
    usage: Usage | None
    details: Any
    entry: Entry
    from_extension: bool = False
    offline: bool = False
    """True when the offline summarizer wrote the summary."""
    fallback_error: str | None = None
    """The model failure the offline summarizer stood in for, if any."""
    masked_entry_ids: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "summary": self.summary,
            "firstKeptEntryId": self.first_kept_entry_id,
            "tokensBefore": self.tokens_before,
            "estimatedTokensAfter": self.estimated_tokens_after,
            "usage": self.usage,
            "details": self.details,
        }


@dataclass(frozen=True, slots=True)
class CompactionStart:
    reason: CompactionReason


@dataclass(frozen=True, slots=True)
class CompactionEnd:
    reason: CompactionReason
    result: CompactionResult | None
    aborted: bool
    will_retry: bool
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class SessionCompact:
    """The compaction entry was appended (pi's extension event ``session_compact``)."""

    entry: Entry
    from_extension: bool
    reason: CompactionReason
    will_retry: bool


@dataclass(frozen=True, slots=True)
class CompactionFailed:
    """pi's ``session_compact_failed``; ``error_message`` is ``None`` for aborts and cancels."""

    reason: CompactionReason
    error_message: str | None
    aborted: bool
    will_retry: bool
    from_extension: bool


@dataclass(frozen=True, slots=True)
class CompactionPaused:
    """Automatic compaction is paused after repeated failures until the user compacts or resumes."""

    failures: int
    message: str


@dataclass(frozen=True, slots=True)
class CompactionFallback:
    """The model's summary failed; the offline summarizer writes it instead."""

    error_message: str


@dataclass(frozen=True, slots=True)
class ObservationsMasked:
    """Old tool results were replaced by placeholders (``context_edit`` entries)."""

    target_ids: Sequence[str]
    tokens_before: int
    tokens_after: int


CompactionEvent: TypeAlias = (
    CompactionStart
    | CompactionEnd
    | SessionCompact
    | CompactionFailed
    | CompactionPaused
    | CompactionFallback
    | ObservationsMasked
    | RetryScheduled
    | RetryAttemptStart
    | RetryFinished
)


@dataclass(frozen=True, slots=True)
class BeforeCompact:
    """pi's ``session_before_compact`` payload."""

    preparation: CompactionPreparation
    branch_entries: Sequence[Entry]
    custom_instructions: str | None
    reason: CompactionReason
    will_retry: bool


@dataclass(frozen=True, slots=True)
class CancelCompaction:
    """Hook answer: cancel this compaction (reported as aborted)."""


@dataclass(frozen=True, slots=True)
class CustomCompaction:
    """Hook answer: store this compaction verbatim (``fromHook: true``), no summarizer call."""

    summary: str
    first_kept_entry_id: str | None
    tokens_before: int | None = None
    usage: Usage | None = None
    details: Any = None


BeforeCompactHook: TypeAlias = Callable[
    [BeforeCompact],
    "CancelCompaction | CustomCompaction | Awaitable[CancelCompaction | CustomCompaction | None] | None",
]
