"""Tree navigation of an agent session (pi's ``/tree``).

The steps are the compaction layer's (:func:`~pi_context.compaction.branch.plan_navigation`,
:func:`~pi_context.compaction.branch.generate_branch_summary`,
:func:`~pi_context.compaction.branch.complete_navigation`, which
:func:`~pi_context.compaction.branch.summarize_branch` runs for library users);
:class:`Navigator` runs them with the extension hooks around them: ``session_before_tree`` may
cancel, supply the summary or change the options, ``session_tree`` is told where the leaf went.
The loadout recorded on the new branch is restored.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from pi_context.errors import TreeError
from pi_context.events import TreeNavigated
from pi_context.messages import Usage
from pi_context.resources.settings import branch_summary_settings_for

from ._compaction import OperationGuard, cancelling

if TYPE_CHECKING:
    from pi_context.compaction.branch import NavigationPlan
    from pi_context.extensions.events import TreePreparation

    from ._state import AgentState
    from .loadout import Loadout

__all__ = ["NavigationResult", "Navigator"]


class NavigationResult(Struct, frozen=True):
    """Outcome of :meth:`AgentSession.navigate` (pi's ``navigateTree`` result)."""

    cancelled: bool = False
    aborted: bool = False
    editor_text: str | None = None
    summary_entry_id: str | None = None
    new_leaf_id: str | None = None


class Navigator:
    """Moves the session's leaf, with an optional summary of the branch left behind."""

    def __init__(self, state: AgentState, loadout: Loadout, guard: OperationGuard) -> None:
        self._state = state
        self._loadout = loadout
        self._guard = guard

    async def navigate(
        self,
        entry_id: str,
        *,
        summarize: bool,
        instructions: str | None,
        replace_instructions: bool,
        label: str | None,
    ) -> NavigationResult:
        """Move the leaf to ``entry_id`` (the caller checked that the session is idle)."""
        # The branch summary's machinery loads on the first navigation: a session that never
        # navigates (every ``pictx -p``) does not pay for it at start-up.
        from pi_context.compaction.branch import plan_navigation
        from pi_context.extensions.events import TreePreparation

        session = self._state.session
        if entry_id == session.leaf_id:
            return NavigationResult(new_leaf_id=session.leaf_id)
        target = session.get(entry_id)
        if target is None:
            raise TreeError(f"Entry {entry_id} not found")
        plan = plan_navigation(session, target)
        prep = TreePreparation(
            target_id=entry_id,
            old_leaf_id=plan.old_leaf_id,
            common_ancestor_id=plan.branch.common_ancestor_id,
            entries_to_summarize=list(plan.branch.entries),
            user_wants_summary=summarize,
            custom_instructions=instructions,
            replace_instructions=replace_instructions,
            label=label,
        )
        async with self._state.turn():  # a stored session's lease, as for a run
            task = asyncio.create_task(self._navigate(plan, prep))
            try:
                result = await self._guard.run(task)
            except asyncio.CancelledError:
                if task.cancelled() and not cancelling():
                    return NavigationResult(
                        cancelled=True, aborted=True, new_leaf_id=session.leaf_id
                    )
                raise
            await self._state.commit()  # the branch summary and label, stored at once
        return result

    async def _navigate(self, plan: NavigationPlan, prep: TreePreparation) -> NavigationResult:
        from pi_context.compaction.branch import complete_navigation, generate_branch_summary
        from pi_context.extensions.events import SessionBeforeTreeEvent, SessionTreeEvent

        state = self._state
        session = state.session
        runner = state.extensions
        summary_text: str | None = None
        details: Any = None
        usage: Usage | None = None
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
        if prep.user_wants_summary and plan.branch.entries and summary_text is None:
            settings = state.compaction_settings()
            result = await generate_branch_summary(
                plan.branch.entries,
                state.model,
                reserve_tokens=branch_summary_settings_for(state.settings_data).reserve_tokens,
                custom_instructions=prep.custom_instructions,
                replace_instructions=bool(prep.replace_instructions),
                retry=state.retry_settings(),
                offline=settings.summarizer == "offline",
                on_event=state.events.emit,
            )
            summary_text, details, usage = result.summary, result.details, result.usage
        entry = complete_navigation(
            session,
            plan,
            summary_text,
            details=details,
            usage=usage,
            from_hook=from_extension,
            label=prep.label,
        )
        summary_id = entry.id if entry is not None else None
        self._loadout.restore_from_branch()
        state.events.emit(
            TreeNavigated(session.leaf_id, prep.old_leaf_id, summary_id, plan.editor_text)
        )
        if runner is not None and runner.has_handlers(SessionTreeEvent.type):
            await runner.emit(
                SessionTreeEvent(
                    new_leaf_id=session.leaf_id,
                    old_leaf_id=prep.old_leaf_id,
                    summary_entry=entry,
                    from_extension=from_extension if summary_id else None,
                )
            )
        return NavigationResult(
            editor_text=plan.editor_text, summary_entry_id=summary_id, new_leaf_id=session.leaf_id
        )
