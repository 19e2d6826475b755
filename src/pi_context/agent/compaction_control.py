"""When and how an agent session compacts: manual, threshold and overflow compactions.

The compaction engine (:class:`~pi_context.compaction.engine.Compactor`) prepares,
summarizes and appends; :class:`CompactionControl` decides *when* (pi's ``_checkCompaction``,
see :mod:`._compaction`) and hands each compaction to its
:class:`~._compaction_runner.CompactionRunner`, made on the first one: it configures the engine
for the current model and settings, passes the engine's events on to the session's event bus,
answers the engine's ``session_before_compact`` hook with the extensions (cancel, or a
compaction of their own) and dispatches ``session_compact`` / ``session_compact_failed`` to them
once the engine returns, in the order the engine reported them. A session that never compacts
never imports the engine. pi's failure rules: a manual compaction raises, an automatic one
reports and returns ``None``.

:class:`OperationGuard` makes a manual compaction or a tree navigation the session's one
abortable operation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pi_context.errors import CompactionCancelledError, CompactionError
from pi_context.messages import AssistantMessage
from pi_context.model import ModelRequest
from pi_context.session.entries import Entry
from pi_context.session.projection import Projection

from ._compaction import (
    CompactionDecision,
    check_compaction,
    idle_compaction_due,
    threshold_exceeded,
)
from ._state import AgentState

if TYPE_CHECKING:  # the engine and its events load with the runner, on the first compaction
    from pi_context.compaction.retry_events import CompactionReason

    from ._compaction_runner import CompactionRunner

__all__ = ["CompactionControl", "OperationGuard"]

_T = TypeVar("_T")


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
    """Decides and starts the compactions of one agent session; its runner keeps the engine
    across calls (the engine's failure count drives the auto-compaction pause)."""

    def __init__(
        self,
        state: AgentState,
        guard: OperationGuard,
        conversation: Callable[[], Awaitable[ModelRequest]] | None = None,
    ) -> None:
        self._state = state
        self._guard = guard
        self._runner: CompactionRunner | None = None
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
        from pi_context.compaction.masking import find_maskable, placeholder_for  # option on

        items = self._state.session.stored_projection().entries
        candidates = find_maskable(items, settings.mask_keep_turns)
        saving = sum(c.tokens - len(placeholder_for(c.tool_name, c.chars)) // 4 for c in candidates)
        if saving < batch:
            return False  # the engine is not loaded until there is a batch to mask
        return self._running().mask()

    # -- running ----------------------------------------------------------------------------------

    async def auto(self, reason: CompactionReason, *, will_retry: bool) -> bool:
        """pi's ``_runAutoCompaction``: ``True`` when the caller should continue the run."""
        result = await self._running().run(reason, None, will_retry=will_retry, manual=False)
        if result is None:
            return False
        return True if will_retry else bool(self._state.queue)

    async def manual(self, instructions: str | None) -> Mapping[str, Any]:
        """pi's ``/compact`` (the caller has stopped any run). Raises
        :class:`~pi_context.errors.CompactionError` (nothing appended)."""
        text = instructions.strip() if instructions else None
        task = asyncio.create_task(
            self._running().run("manual", text or None, will_retry=False, manual=True)
        )
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
        await self._running().report_failed(
            reason, error, aborted=aborted, from_extension=from_extension
        )

    def _running(self) -> CompactionRunner:
        runner = self._runner
        if runner is None:
            from ._compaction_runner import CompactionRunner

            runner = self._runner = CompactionRunner(self._state, self._conversation)
        return runner
