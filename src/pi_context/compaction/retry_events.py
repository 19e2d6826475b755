"""What a summarization request reports while it retries (compaction and branch summaries).

Defined here, below the engine and the agent, so the summarizer emits the very events the
agent's stream carries (``summarization_retry_*`` in pi's ``--mode json``).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from msgspec import Struct

from pi_context._records import Event

__all__ = [
    "CompactionReason",
    "SummarizationRetryAttemptStart",
    "SummarizationRetryEvent",
    "SummarizationRetryFinished",
    "SummarizationRetryScheduled",
    "SummarySource",
]

CompactionReason = Literal["manual", "threshold", "overflow"]
SummarySource = Literal["compaction", "branchSummary"]


class SummarizationRetryScheduled(Event, Struct, frozen=True):
    """A summarization request failed transiently; attempt ``attempt`` of ``max_attempts``
    starts after ``delay_ms``."""

    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str
    type: ClassVar[str] = "summarization_retry_scheduled"


class SummarizationRetryAttemptStart(Event, Struct, frozen=True):
    """The retry begins; ``reason`` is the compaction's (``None`` for branch summaries)."""

    source: SummarySource
    reason: CompactionReason | None = None
    label: str = ""
    """Which request (``Summarization``, ``Turn prefix summarization``, ...); not written."""
    type: ClassVar[str] = "summarization_retry_attempt_start"
    _hidden: ClassVar[frozenset[str]] = frozenset({"label"})


class SummarizationRetryFinished(Event, Struct, frozen=True):
    """The retried request ended (its outcome is kept here; pi's record carries no fields)."""

    success: bool = True
    attempt: int = 0
    final_error: str | None = None
    type: ClassVar[str] = "summarization_retry_finished"
    _hidden: ClassVar[frozenset[str]] = frozenset({"success", "attempt", "final_error"})


SummarizationRetryEvent = (
    SummarizationRetryScheduled | SummarizationRetryAttemptStart | SummarizationRetryFinished
)
