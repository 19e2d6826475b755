"""Wiring between :class:`~pi_context.compaction.engine.Compactor` and the agent session.

The engine reports through a synchronous callback; its events become agent events at once.
Extension notifications (``session_compact``, ``session_compact_failed``) are asynchronous, so
they are dispatched right after the engine returns, in the order the engine reported them.
The ``session_before_compact`` hook is answered by the extension runner (cancel, or a custom
compaction stored verbatim).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_context.compaction.engine import Compactor
from pi_context.compaction.events import (
    BeforeCompact,
    CancelCompaction,
    CompactionEvent,
    CompactionFailed,
    CustomCompaction,
    SessionCompact,
)
from pi_context.compaction.events import CompactionEnd as EngineEnd
from pi_context.compaction.events import CompactionStart as EngineStart
from pi_context.compaction.summarize import RetryAttemptStart, RetryFinished, RetryScheduled
from pi_context.extensions.events import (
    SessionBeforeCompactEvent,
    SessionCompactEvent,
    SessionCompactFailedEvent,
)

from .events import CompactionEnd, CompactionReason, CompactionStart

if TYPE_CHECKING:
    from pi_context.compaction.events import CompactionResult
    from pi_context.extensions.events import Event

    from .operations import CompactionOps

__all__ = ["compactor_for", "run_compaction"]


def compactor_for(ops: CompactionOps) -> Compactor:
    """The session's compactor, kept across calls (its failure count drives the pause)."""
    compactor = ops._compactor
    if compactor is None:
        compactor = ops._compactor = Compactor(ops.session)
        compactor.cache = ops._token_cache
    compactor.session = ops.session  # the session object may have been replaced (fork)
    compactor.model = ops._model
    compactor.settings = ops.compaction_settings()
    compactor.retry = ops.retry_settings()
    return compactor


async def run_compaction(
    ops: CompactionOps,
    reason: CompactionReason,
    instructions: str | None,
    *,
    will_retry: bool,
    manual: bool,
) -> CompactionResult | None:
    """One compaction through the engine. Manual failures raise
    :class:`~pi_context.errors.CompactionError`; automatic ones return ``None``."""
    compactor = compactor_for(ops)
    runner = ops._extensions
    pending: list[Event] = []
    retry_forward = ops._retry_event("compaction", reason)

    def on_event(event: CompactionEvent) -> None:
        if isinstance(event, EngineStart):
            ops._emit(CompactionStart(event.reason))
        elif isinstance(event, EngineEnd):
            ops._emit(
                CompactionEnd(
                    event.reason,
                    event.result.to_json() if event.result is not None else None,
                    event.aborted,
                    event.will_retry,
                    event.error_message,
                )
            )
        elif isinstance(event, SessionCompact):
            pending.append(
                SessionCompactEvent(
                    compaction_entry=event.entry,
                    from_extension=event.from_extension,
                    reason=event.reason,
                    will_retry=event.will_retry,
                )
            )
        elif isinstance(event, CompactionFailed):
            pending.append(
                SessionCompactFailedEvent(
                    reason=event.reason,
                    aborted=event.aborted,
                    error_message=event.error_message,
                    will_retry=False,
                    from_extension=event.from_extension,
                )
            )
        elif isinstance(event, RetryScheduled | RetryAttemptStart | RetryFinished):
            retry_forward(event)

    async def hook(payload: BeforeCompact) -> Any:
        if runner is None or not runner.has_handlers(SessionBeforeCompactEvent.type):
            return None
        answer = await runner.emit_session_before_compact(
            SessionBeforeCompactEvent(
                preparation=payload.preparation,
                branch_entries=list(payload.branch_entries),
                reason=payload.reason,
                custom_instructions=payload.custom_instructions,
                will_retry=payload.will_retry,
            )
        )
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
            window = ops._model.info.context_window if ops._model is not None else 0
            if compactor.mask() and not compactor.needs_compaction(window):
                return None
        return await compactor.compact(
            instructions, reason="manual" if manual else reason, will_retry=will_retry
        )
    finally:
        compactor.on_event = None
        compactor.before_compact = None
        if runner is not None:
            for event in pending:
                if runner.has_handlers(event.type):
                    await runner.emit(event)
