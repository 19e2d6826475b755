"""Events a compaction emits: the same classes the agent streams and extensions receive.

Every event here is a :class:`~pi_context._records.Event` with pi's event name as ``type``
(``compaction_start``, ``compaction_end``, ``session_before_compact``, ``session_compact``,
``session_compact_failed``) and pi's JSON record as ``to_json()``; nothing above translates
them. The retry events of the summarizer live in :mod:`.retry_events`.

Order on success: :class:`CompactionStart` → (hook) → (retry events) → entry appended →
:class:`SessionCompact` → :class:`CompactionEnd`. On failure: :class:`CompactionStart` →
:class:`CompactionEnd` (``result=None``) → :class:`CompactionFailed` (and
:class:`CompactionPaused` when the guard pauses automatic compaction). ``will_retry`` of a
failure is always ``False``, as in pi 1.6.0.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar, TypeAlias

from msgspec import Struct, field

# CompactionPreparation, Usage and Entry are imported at run time although only annotations
# name them: a Struct's signature (``help()``, ``inspect.signature``) resolves its field types.
# This module loads with the engine, which imports them anyway.
from pi_context._records import Event
from pi_context.compaction.prepare import CompactionPreparation
from pi_context.compaction.retry_events import (
    CompactionReason,
    SummarizationRetryAttemptStart,
    SummarizationRetryFinished,
    SummarizationRetryScheduled,
)
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


class CompactionResult(Struct):
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


class CompactionStart(Event, Struct, frozen=True):
    """A compaction begins (``reason``: manual, threshold or overflow)."""

    reason: CompactionReason
    type: ClassVar[str] = "compaction_start"


class CompactionEnd(Event, Struct, frozen=True):
    """A compaction finished; ``result`` is absent on failure (then ``will_retry`` is false)."""

    reason: CompactionReason
    result: CompactionResult | None = None
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None
    type: ClassVar[str] = "compaction_end"


class SessionCompact(Event, Struct, frozen=True):
    """The compaction entry was appended (extensions' ``session_compact``)."""

    compaction_entry: Entry
    from_extension: bool
    reason: CompactionReason
    will_retry: bool = False
    type: ClassVar[str] = "session_compact"


class CompactionFailed(Event, Struct, frozen=True):
    """Extensions' ``session_compact_failed``; ``error_message`` is ``None`` for aborts and
    cancels."""

    reason: CompactionReason
    error_message: str | None = None
    aborted: bool = False
    will_retry: bool = False
    from_extension: bool = False
    type: ClassVar[str] = "session_compact_failed"


class CompactionPaused(Event, Struct, frozen=True):
    """Automatic compaction is paused after repeated failures until the user compacts or resumes."""

    failures: int
    message: str
    type: ClassVar[str] = "compaction_paused"


class CompactionFallback(Event, Struct, frozen=True):
    """The model's summary failed; the offline summarizer writes it instead."""

    error_message: str
    type: ClassVar[str] = "compaction_fallback"


class ObservationsMasked(Event, Struct, frozen=True):
    """Old tool results were replaced by placeholders (``context_edit`` entries)."""

    target_ids: Sequence[str]
    tokens_before: int
    tokens_after: int
    type: ClassVar[str] = "observations_masked"


CompactionEvent: TypeAlias = (
    CompactionStart
    | CompactionEnd
    | SessionCompact
    | CompactionFailed
    | CompactionPaused
    | CompactionFallback
    | ObservationsMasked
    | SummarizationRetryScheduled
    | SummarizationRetryAttemptStart
    | SummarizationRetryFinished
)


class BeforeCompact(Event, Struct, frozen=True):
    """Extensions' ``session_before_compact``: they may cancel the compaction or supply one."""

    preparation: CompactionPreparation
    branch_entries: Sequence[Entry]
    custom_instructions: str | None = None
    reason: CompactionReason = "manual"
    will_retry: bool = False
    signal: asyncio.Event = field(default_factory=asyncio.Event)
    type: ClassVar[str] = "session_before_compact"


class CancelCompaction(Struct, frozen=True):
    """Hook answer: cancel this compaction (reported as aborted)."""


class CustomCompaction(Struct, frozen=True):
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
