"""When and how an agent session compacts: manual, threshold and overflow compactions.

The compaction engine (:class:`~pi_context.compaction.engine.Compactor`) prepares,
summarizes and appends; :class:`CompactionControl` decides *when* (pi's ``_checkCompaction``,
see :mod:`.compaction_decision`), configures the engine for the current model and settings,
passes the engine's events on to the session's event bus, answers the engine's
``session_before_compact`` hook with the extensions (cancel, or a compaction of their own) and
dispatches ``session_compact`` / ``session_compact_failed`` to them once the engine returns, in
the order the engine reported them. pi's failure rules: a manual compaction raises, an
automatic one reports and returns ``None``.

:class:`OperationGuard` makes a manual compaction or a tree navigation the session's one
abortable operation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

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
from pi_context.compaction.masking import find_maskable, placeholder_for
from pi_context.compaction.retry_events import (
    SummarizationRetryAttemptStart,
    SummarizationRetryFinished,
    SummarizationRetryScheduled,
)
from pi_context.errors import CompactionCancelledError, CompactionError
from pi_context.events import CompactionReason
from pi_context.messages import AssistantMessage
from pi_context.model import ModelRequest
from pi_context.session.entries import Entry
from pi_context.session.projection import Projection

from .compaction_decision import (
    CompactionDecision,
    check_compaction,
    idle_compaction_due,
    threshold_exceeded,
)
from .state import AgentState

__all__ = ["CompactionControl", "OperationGuard"]

_T = TypeVar("_T")

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


def cancelling() -> bool:
    """Whether the current task itself is being cancelled (not just the awaited operation)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class OperationGuard:
    """The session's abortable operation (a manual compaction or a tree navigation)."""

    __slots__ = ("_depth", "_task")

    def __init__(self) -> None:
        self._task: asyncio.Task[Any] | None = None
        self._depth = 0

    @property
    def running(self) -> bool:
        return self._depth > 0

    async def run(self, task: asyncio.Task[_T]) -> _T:
        """Await ``task`` as the operation :meth:`abort` cancels."""
        self._depth += 1
        self._task = task
        try:
            return await task
        finally:
            self._depth -= 1
            self._task = None

    def abort(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()


class CompactionControl:
    """Runs the compactions of one agent session; keeps the engine across calls (its failure
    count drives the auto-compaction pause)."""

    def __init__(
        self,
        state: AgentState,
        guard: OperationGuard,
        conversation: Callable[[], Awaitable[ModelRequest]] | None = None,
    ) -> None:
        self._state = state
        self._guard = guard
        self._compactor: Compactor | None = None
        self._conversation = conversation
        """Builds the request the agent would send now (a shared summary request continues it)."""

    # -- decisions --------------------------------------------------------------------------------

    def decide(
        self,
        message: AssistantMessage,
        entry_id: str | None,
        *,
        skip_aborted: bool = True,
        recovery_attempted: bool = False,
    ) -> CompactionDecision:
        """What to do after ``message`` (pi's ``_checkCompaction``); ``recovery_attempted``: an
        overflow recovery was already tried in this run (a second overflow is ``exhausted``)."""
        state = self._state
        session = state.session
        return check_compaction(
            message,
            entry_id,
            branch=session.branch_view(),
            projection=session.stored_projection(),
            info=state.require_model().info,
            settings=state.compaction_settings(),
            skip_aborted=skip_aborted,
            recovery_attempted=recovery_attempted,
            cache=state.token_cache,
            facts=state.positions,
        )

    def over_threshold(self, projection: Projection, branch: Sequence[Entry]) -> bool:
        """The between-turn test on the given projection of ``branch``."""
        state = self._state
        return threshold_exceeded(
            projection,
            branch,
            state.require_model().info,
            state.compaction_settings(),
            state.token_cache,
        )

    def idle_due(self, message: AssistantMessage) -> bool:
        """Whether a prompt now, after ``message``, follows a pause long enough to compact
        early (``compaction.idleCompactPercent``)."""
        state = self._state
        session = state.session
        return idle_compaction_due(
            message,
            state.now_ms(),
            session.stored_projection(),
            session.branch_view(),
            state.require_model().info,
            state.compaction_settings(),
            state.token_cache,
        )

    def mask_batch(self) -> bool:
        """Mask old tool results now when a batch's worth can be masked
        (``compaction.maskBatchTokens`` with ``maskObservations``); whether it masked."""
        settings = self._state.compaction_settings()
        batch = settings.mask_batch_tokens
        if not settings.enabled or not settings.mask_observations or batch <= 0:
            return False
        items = self._state.session.stored_projection().entries
        candidates = find_maskable(items, settings.mask_keep_turns)
        saving = sum(c.tokens - len(placeholder_for(c.tool_name, c.chars)) // 4 for c in candidates)
        if saving < batch:
            return False
        compactor = self._engine()
        events = self._state.events
        compactor.on_event = lambda event: (
            events.emit(event) if isinstance(event, _STREAMED) else None
        )
        return bool(compactor.mask())

    # -- running ----------------------------------------------------------------------------------

    async def auto(self, reason: CompactionReason, *, will_retry: bool) -> bool:
        """pi's ``_runAutoCompaction``: ``True`` when the caller should continue the run."""
        result = await self._run(reason, None, will_retry=will_retry, manual=False)
        if result is None:
            return False
        return True if will_retry else bool(self._state.queue)

    async def manual(self, instructions: str | None) -> Mapping[str, Any]:
        """pi's ``/compact`` (the caller has stopped any run). Raises
        :class:`~pi_context.errors.CompactionError` (nothing appended)."""
        text = instructions.strip() if instructions else None
        task = asyncio.create_task(self._run("manual", text or None, will_retry=False, manual=True))
        try:
            result = await self._guard.run(task)
        except asyncio.CancelledError:
            if task.cancelled() and not cancelling():
                raise CompactionCancelledError("Compaction cancelled") from None
            raise
        if result is None:  # pragma: no cover - manual compactions raise instead
            raise CompactionError("Nothing to compact (session too small)")
        return result.to_json()

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

    async def _run(
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
