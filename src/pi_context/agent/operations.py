"""Compaction and tree navigation for :class:`~pi_context.agent.session.AgentSession`.

The compaction engine (:mod:`pi_context.compaction`) prepares, summarizes and appends; this
module decides *when* (manual, threshold, overflow), forwards the engine's events to the
session's event stream and to extensions (``session_before_compact`` may cancel or supply the
compaction; ``session_compact`` / ``session_compact_failed`` are notifications), and applies
pi's failure rules: a manual compaction rethrows, an automatic one reports and returns
``False``. Navigation follows branch-summary.md §1.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from pi_context.compaction.accounting import TokenCache
from pi_context.compaction.branch import collect_branch_entries, generate_branch_summary
from pi_context.compaction.engine import Compactor
from pi_context.compaction.summarize import RetryAttemptStart, RetryFinished, RetryScheduled
from pi_context.errors import (
    CompactionCancelledError,
    CompactionError,
    PiContextError,
    TreeError,
)
from pi_context.extensions import ExtensionRunner
from pi_context.extensions.events import (
    SessionBeforeTreeEvent,
    SessionCompactFailedEvent,
    SessionTreeEvent,
    TreePreparation,
)
from pi_context.messages import text_of
from pi_context.model import Model
from pi_context.prompt import get_current_tools
from pi_context.resources.settings import (
    CompactionSettings,
    RetrySettings,
    branch_summary_settings_for,
)
from pi_context.session import Session
from pi_context.tools import BUILTIN_TOOL_NAMES

from .events import (
    AgentEvent,
    CompactionReason,
    SummarizationRetryAttemptStart,
    SummarizationRetryFinished,
    SummarizationRetryScheduled,
    TreeNavigated,
)
from .pathfacts import PathFacts

__all__ = ["CompactionOps", "NavigationResult"]

_T = TypeVar("_T")


def _cancelling() -> bool:
    """Whether the current task itself is being cancelled (not just the awaited operation)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


@dataclass(frozen=True, slots=True)
class NavigationResult:
    """Outcome of :meth:`CompactionOps.navigate` (pi's ``navigateTree`` result)."""

    cancelled: bool = False
    aborted: bool = False
    editor_text: str | None = None
    summary_entry_id: str | None = None
    new_leaf_id: str | None = None


class CompactionOps:
    """Mixin: what AgentSession does around the compaction engine and ``/tree``."""

    session: Session
    _model: Model | None
    _extensions: ExtensionRunner | None
    _queue: list[Any]
    _active: list[str]
    _tools: dict[str, Any]
    _run_task: asyncio.Task[None] | None

    def __init__(self) -> None:
        self._operation: asyncio.Task[Any] | None = None
        self._operation_depth = 0
        self._token_cache = TokenCache()
        """Per-entry token estimates shared by the checks, the stats and the compactor."""
        self._path_facts = PathFacts()
        """Branch positions shared by the checks and the stats (see :mod:`.pathfacts`)."""
        self._compactor: Compactor | None = None
        """Created on first use and kept: its failure count drives the auto-compaction pause."""

    # provided by AgentSession
    def _emit(self, event: AgentEvent) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def compaction_settings(self) -> CompactionSettings:  # pragma: no cover - overridden
        raise NotImplementedError

    def retry_settings(self) -> RetrySettings:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def settings_data(self) -> dict[str, Any]:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def busy(self) -> bool:  # pragma: no cover - overridden
        raise NotImplementedError

    def abort(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    # -- state ------------------------------------------------------------------------------------

    @property
    def compacting(self) -> bool:
        """A manual compaction or a tree navigation is running."""
        return self._operation_depth > 0

    def _abort_operation(self) -> None:
        if self._operation is not None and not self._operation.done():
            self._operation.cancel()

    def _retry_event(self, source: str, reason: CompactionReason | None) -> Callable[[Any], None]:
        def forward(event: Any) -> None:
            if isinstance(event, RetryScheduled):
                self._emit(
                    SummarizationRetryScheduled(
                        event.attempt, event.max_attempts, event.delay_ms, event.error_message
                    )
                )
            elif isinstance(event, RetryAttemptStart):
                self._emit(
                    SummarizationRetryAttemptStart(
                        cast(Any, source), reason if source == "compaction" else None
                    )
                )
            elif isinstance(event, RetryFinished):
                self._emit(SummarizationRetryFinished())

        return forward

    async def _compact_failed_event(
        self, reason: CompactionReason, error: str | None, aborted: bool, from_extension: bool
    ) -> None:
        runner = self._extensions
        if runner is not None and runner.has_handlers(SessionCompactFailedEvent.type):
            await runner.emit(
                SessionCompactFailedEvent(
                    reason=reason,
                    aborted=aborted,
                    error_message=error,
                    will_retry=False,
                    from_extension=from_extension,
                )
            )

    # -- compaction -------------------------------------------------------------------------------

    async def _auto_compact(self, reason: CompactionReason, *, will_retry: bool) -> bool:
        """pi's ``_runAutoCompaction``: ``True`` when the caller should continue the run."""
        from .compaction_glue import run_compaction

        result = await run_compaction(self, reason, None, will_retry=will_retry, manual=False)
        if result is None:
            return False
        return True if will_retry else bool(self._queue)

    async def compact(self, instructions: str | None = None) -> Mapping[str, Any]:
        """Compact now (pi's ``/compact``): abort any run, summarize, append; returns the result
        as pi reports it. Raises :class:`~pi_context.errors.CompactionError` (nothing appended)."""
        from .compaction_glue import run_compaction

        if self.busy:
            self.abort()
            if self._run_task is not None:
                await asyncio.wait([self._run_task])
        text = instructions.strip() if instructions else None
        task = asyncio.create_task(
            run_compaction(self, "manual", text or None, will_retry=False, manual=True)
        )
        try:
            result = await self._guarded(task)
        except asyncio.CancelledError:
            if task.cancelled() and not _cancelling():
                raise CompactionCancelledError("Compaction cancelled") from None
            raise
        if result is None:  # pragma: no cover - manual compactions raise instead
            raise CompactionError("Nothing to compact (session too small)")
        return result.to_json()

    # -- navigation -------------------------------------------------------------------------------

    async def navigate(
        self,
        entry_id: str,
        *,
        summarize: bool = False,
        instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> NavigationResult:
        """Move the leaf to ``entry_id`` (pi's ``/tree``), optionally leaving a summary of the
        branch being left at the destination."""
        if self.busy:
            raise PiContextError(
                "Wait for the current response to finish before navigating the session tree."
            )
        if self.compacting:
            raise PiContextError(
                "Wait for the current compaction or tree navigation to finish before navigating "
                "the session tree."
            )
        session = self.session
        old_leaf = session.leaf_id
        if entry_id == old_leaf:
            return NavigationResult(new_leaf_id=old_leaf)
        target = session.get(entry_id)
        if target is None:
            raise TreeError(f"Entry {entry_id} not found")
        collected = collect_branch_entries(session, old_leaf, entry_id)
        prep = TreePreparation(
            target_id=entry_id,
            old_leaf_id=old_leaf,
            common_ancestor_id=collected.common_ancestor_id,
            entries_to_summarize=list(collected.entries),
            user_wants_summary=summarize,
            custom_instructions=instructions,
            replace_instructions=replace_instructions,
            label=label,
        )
        task = asyncio.create_task(self._navigate(prep, collected.entries, target))
        try:
            return await self._guarded(task)
        except asyncio.CancelledError:
            if task.cancelled() and not _cancelling():
                return NavigationResult(cancelled=True, aborted=True, new_leaf_id=session.leaf_id)
            raise

    async def _guarded(self, task: asyncio.Task[_T]) -> _T:
        """Await ``task`` as the session's abortable operation."""
        self._operation_depth += 1
        self._operation = task
        try:
            return await task
        finally:
            self._operation_depth -= 1
            self._operation = None

    async def _navigate(
        self, prep: TreePreparation, entries: list[Any], target: Any
    ) -> NavigationResult:
        session = self.session
        runner = self._extensions
        summary_text: str | None = None
        details: Any = None
        usage: Any = None
        from_extension = False
        if runner is not None and runner.has_handlers(SessionBeforeTreeEvent.type):
            answer = await runner.emit_session_before_tree(SessionBeforeTreeEvent(prep))
            if answer is not None:
                if answer.cancel:
                    return NavigationResult(cancelled=True, new_leaf_id=session.leaf_id)
                if answer.summary is not None and prep.user_wants_summary:
                    summary_text = answer.summary.summary
                    details, usage = answer.summary.details, answer.summary.usage
                    from_extension = True
                if answer.custom_instructions is not None:
                    prep.custom_instructions = answer.custom_instructions
                if answer.replace_instructions is not None:
                    prep.replace_instructions = answer.replace_instructions
                if answer.label is not None:
                    prep.label = answer.label
        if prep.user_wants_summary and entries and summary_text is None:
            settings = self.compaction_settings()
            result = await generate_branch_summary(
                entries,
                self._model,
                reserve_tokens=branch_summary_settings_for(self.settings_data).reserve_tokens,
                custom_instructions=prep.custom_instructions,
                replace_instructions=bool(prep.replace_instructions),
                retry=self.retry_settings(),
                offline=settings.summarizer == "offline",
                on_event=self._retry_event("branchSummary", None),
            )
            summary_text, details, usage = result.summary, result.details, result.usage
        editor_text: str | None = None
        if (target.type == "message" and target.role == "user") or target.type == "custom_message":
            new_leaf: str | None = target.parent_id
            content = (
                target.message["content"] if target.type == "message" else target.get("content")
            )
            editor_text = text_of(content)
        else:
            new_leaf = target.id
        summary_id: str | None = None
        if summary_text is not None:
            entry = session.append_branch_summary(
                prep.old_leaf_id,
                summary_text,
                parent_id=new_leaf,
                details=details,
                usage=usage,
                from_hook=from_extension,
            )
            summary_id = entry.id
            if prep.label:
                session.append_label(summary_id, prep.label)
        else:
            session.move_leaf(new_leaf)
            if prep.label:
                session.append_label(prep.target_id, prep.label)
        self._restore_tools()
        self._emit(TreeNavigated(session.leaf_id, prep.old_leaf_id, summary_id, editor_text))
        if runner is not None and runner.has_handlers(SessionTreeEvent.type):
            await runner.emit(
                SessionTreeEvent(
                    new_leaf_id=session.leaf_id,
                    old_leaf_id=prep.old_leaf_id,
                    summary_entry=session.get(summary_id) if summary_id else None,
                    from_extension=from_extension if summary_id else None,
                )
            )
        return NavigationResult(
            editor_text=editor_text, summary_entry_id=summary_id, new_leaf_id=session.leaf_id
        )

    def _restore_tools(self) -> None:
        """The loadout recorded on the branch, plus non-built-in tools it never mentions."""
        systems: list[Mapping[str, Any]] = []
        for e in self.session.branch_view():
            if e.type == "message" and e.role == "system" and e.message is not None:
                systems.append(e.message)
            elif e.type == "compaction" and isinstance(e.get("systemMessage"), Mapping):
                systems.append(e.get("systemMessage"))
        recorded = list(get_current_tools(systems))
        if not recorded:
            return
        mentioned = set()
        for m in systems:
            for key in ("toolsAdded", "toolsRemoved"):
                for t in (m or {}).get(key) or ():
                    mentioned.add(t.get("name"))
        names = [n for n in recorded if n in self._tools]
        names += [
            n
            for n in self._tools
            if n not in mentioned and n not in names and n not in BUILTIN_TOOL_NAMES
        ]
        self._active = names
