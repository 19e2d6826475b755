"""The running half of :class:`~._compaction.CompactionControl`: one compaction (or
masking) through the engine, its events passed on, the extension hooks around it.

Kept apart from the decisions so that a session that never compacts never loads the engine,
its preparation or its events: the control makes its runner on the first compaction.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from pi_context.compaction.engine import Compactor
from pi_context.compaction.events import (
    BeforeCompact,
    CancelCompaction,
    CompactionEnd,
    CompactionEvent,
    CompactionFailed,
    CompactionFallback,
    CompactionPaused,
    CompactionResult,
    CompactionStart,
    CustomCompaction,
    ObservationsMasked,
    SessionCompact,
)
from pi_context.compaction.retry_events import (
    CompactionReason,
    SummarizationRetryAttemptStart,
    SummarizationRetryFinished,
    SummarizationRetryScheduled,
)

if TYPE_CHECKING:
    from pi_context.model import ModelRequest

    from ._state import AgentState

__all__ = ["CompactionRunner"]

_STREAMED = (
    CompactionStart,
    CompactionEnd,
    CompactionFallback,
    CompactionPaused,
    ObservationsMasked,
    SummarizationRetryScheduled,
    SummarizationRetryAttemptStart,
    SummarizationRetryFinished,
)
"""The engine's events that the agent streams to ``prompt()`` and subscribers; the other two
(``session_compact``, ``session_compact_failed``) are extension events, which the agent hands to
extension handlers (a subscriber learns the same from ``compaction_end``)."""


class CompactionRunner:
    """Runs the compactions of one agent session; keeps the engine across calls (its failure
    count drives the auto-compaction pause)."""

    __slots__ = ("_compactor", "_conversation", "_state")

    def __init__(
        self,
        state: AgentState,
        conversation: Callable[[], Awaitable[ModelRequest]] | None,
    ) -> None:
        self._state = state
        self._conversation = conversation
        self._compactor: Compactor | None = None

    def mask(self) -> bool:
        """Mask old tool results now (the control decided a batch is worth it)."""
        compactor = self._engine()
        events = self._state.events
        compactor.on_event = lambda event: (
            events.emit(event) if isinstance(event, _STREAMED) else None
        )
        return bool(compactor.mask())

    async def report_failed(
        self, reason: CompactionReason, error: str | None, *, aborted: bool, from_extension: bool
    ) -> None:
        """``session_compact_failed`` for a failure decided outside the engine (exhausted)."""
        runner = self._state.extensions
        event = CompactionFailed(
            reason=reason,
            error_message=error,
            aborted=aborted,
            will_retry=False,
            from_extension=from_extension,
        )
        if runner is not None and runner.has_handlers(event.type):
            await runner.emit(event)

    def _engine(self) -> Compactor:
        state = self._state
        compactor = self._compactor
        if compactor is None:
            compactor = self._compactor = Compactor(state.session)
            compactor.cache = state.token_cache
            compactor.conversation = self._conversation
        compactor.session = state.session  # the session object may have been replaced (fork)
        compactor.model = state.model
        compactor.settings = state.compaction_settings()
        compactor.retry = state.retry_settings()
        return compactor

    async def run(
        self,
        reason: CompactionReason,
        instructions: str | None,
        *,
        will_retry: bool,
        manual: bool,
    ) -> CompactionResult | None:
        """One compaction through the engine. Manual failures raise; automatic ones return
        ``None``."""
        state = self._state
        compactor = self._engine()
        runner = state.extensions
        for_extensions: list[SessionCompact | CompactionFailed] = []

        def on_event(event: CompactionEvent) -> None:
            if isinstance(event, SessionCompact | CompactionFailed):
                for_extensions.append(event)  # their handlers are async: after the engine
            elif isinstance(event, _STREAMED):
                state.events.emit(event)

        async def hook(payload: BeforeCompact) -> CancelCompaction | CustomCompaction | None:
            if runner is None or not runner.has_handlers(payload.type):
                return None
            answer = await runner.emit_session_before_compact(payload)
            if answer is None:
                return None
            if answer.cancel:
                return CancelCompaction()
            draft = answer.compaction
            if draft is None:
                return None
            return CustomCompaction(
                summary=draft.summary,
                first_kept_entry_id=draft.first_kept_entry_id,
                tokens_before=draft.tokens_before,
                usage=draft.usage,
                details=draft.details,
            )

        compactor.on_event = on_event
        compactor.before_compact = hook
        try:
            if reason == "threshold" and compactor.settings.mask_observations:
                window = state.model.info.context_window if state.model is not None else 0
                if compactor.mask() and not compactor.needs_compaction(window):
                    return None
            return await compactor.compact(
                instructions, reason="manual" if manual else reason, will_retry=will_retry
            )
        finally:
            compactor.on_event = None
            compactor.before_compact = None
            if runner is not None:
                for event in for_extensions:
                    if runner.has_handlers(event.type):
                        await runner.emit(event)
