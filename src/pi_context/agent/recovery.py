"""What an agent session does around a run: the pre-prompt compaction check, and after the run
agent-level retries of transient errors, overflow recovery (omit the failed attempt with
``context_edit``, compact, retry once) and the threshold check.

Whether to retry and how long to wait is the one :class:`~pi_context.model.retry.RetryPolicy`
(the summarizer asks the same); this module decides what a retry does to the session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import cast

from pi_context.errors import ProviderError
from pi_context.events import AutoRetryEnd, AutoRetryStart, EntryAppended
from pi_context.messages import AgentMessage, AssistantMessage
from pi_context.model.retry import RetryPolicy

from ._compaction import CompactionDecision
from ._loop import RunResult
from ._state import AgentState
from .compaction_control import CompactionControl

__all__ = ["Recovery", "RunMore"]

RunMore = Callable[[Sequence[AgentMessage]], Awaitable[RunResult]]
"""Continue the run with these messages first (the loop's ``run``)."""


class Recovery:
    """Checks before a prompt, and retries and recoveries after a run."""

    def __init__(self, state: AgentState, compaction: CompactionControl) -> None:
        self._state = state
        self._compaction = compaction
        self._retries = 0
        self._retry_wait: asyncio.Future[object] | None = None
        self._overflow_recovered = False
        """One overflow recovery was tried in this run and no response has succeeded since:
        a second overflow is ``exhausted``. Only this class writes it."""

    def abort_retry(self) -> bool:
        """Cancel a pending automatic-retry delay (the run then ends with the failed attempt,
        ``auto_retry_end`` saying ``Retry cancelled``); returns whether one was pending."""
        wait = self._retry_wait
        if wait is None or wait.done():
            return False
        wait.cancel()
        return True

    def last_assistant(self) -> tuple[AssistantMessage, str] | None:
        """The newest assistant message on the branch and its entry id."""
        for entry in reversed(self._state.session.branch_view()):
            if entry.type == "message" and entry.role == "assistant" and entry.message is not None:
                return cast(AssistantMessage, entry.message), entry.id
        return None

    async def before_prompt(self) -> None:
        """Before a new prompt: the last response (aborted ones too) may call for a compaction,
        and so may a pause that let the prompt cache expire (``idleCompactPercent``); else a
        batch of old tool results may be masked (``maskBatchTokens``)."""
        self._overflow_recovered = False
        last = self.last_assistant()
        if last is None:
            return
        decision = self._compaction.decide(*last, skip_aborted=False)
        if decision.action == "threshold" or (
            decision.action == "none" and self._compaction.idle_due(last[0])
        ):
            await self._compaction.auto("threshold", will_retry=False)
        elif decision.action == "none":
            self._compaction.mask_batch()
        elif decision.action == "overflow":
            if decision.will_retry:
                self._omit_attempt(*last)
            await self._compaction.auto("overflow", will_retry=False)

    def will_retry(self, result: RunResult) -> bool:
        """Whether the session will continue this run (``agent_end.willRetry``): an automatic
        retry of a transient error, or an overflow recovery."""
        message = result.last_assistant
        if message is None or result.aborted:
            return False
        if self._should_retry(message, result.last_error, self._retries):
            return True
        decision = self._decide(result)
        return bool(decision.action == "overflow" and decision.will_retry)

    async def after_run(self, result: RunResult, run_more: RunMore) -> bool:
        """Post-run handling (``run_more`` continues the run); returns whether the run was
        aborted meanwhile."""
        state = self._state
        self._retries = 0
        while True:
            retries = self._retries
            message = result.last_assistant
            entry_id = result.last_assistant_entry_id
            if message is None:
                return False
            if self._should_retry(message, result.last_error, retries):
                self._retries = retries = retries + 1
                retried = await self._auto_retry(message, entry_id, result, retries, run_more)
                if retried is None:  # the delay was cancelled (abort_retry)
                    state.events.emit(AutoRetryEnd(False, retries, "Retry cancelled"))
                    self._retries = 0
                    return False
                result = retried
                if result.aborted:
                    return True
                continue
            if retries:
                state.events.emit(
                    AutoRetryEnd(
                        message["stopReason"] != "error", retries, message.get("errorMessage")
                    )
                )
                self._retries = 0
            decision = self._decide(result)
            if decision.action == "exhausted":
                from pi_context.compaction.events import CompactionEnd  # on the rare failure

                state.events.emit(
                    CompactionEnd("overflow", None, False, False, decision.error_message)
                )
                await self._compaction.report_failed(
                    "overflow", decision.error_message, aborted=False, from_extension=False
                )
                return False
            if decision.action == "none":
                return False
            if decision.action == "overflow" and decision.will_retry:
                self._overflow_recovered = True
                self._omit_attempt(message, entry_id)
                go_on = await self._compaction.auto("overflow", will_retry=True)
            else:
                go_on = await self._compaction.auto(
                    "overflow" if decision.action == "overflow" else "threshold",
                    will_retry=False,
                )
            if not go_on:
                return False
            result = await run_more(state.queue.take())
            if result.aborted:
                return True

    def _decide(self, result: RunResult) -> CompactionDecision:
        """The compaction decision after ``result``'s last response. A response that succeeded
        (neither an error nor cut at the length limit) ends an overflow recovery: a later
        overflow in the same run may be recovered again."""
        if any(
            m.get("role") == "assistant" and m.get("stopReason") not in ("error", "length")
            for m in result.messages
        ):
            self._overflow_recovered = False
        message = result.last_assistant
        assert message is not None
        return self._compaction.decide(
            message,
            result.last_assistant_entry_id,
            recovery_attempted=self._overflow_recovered,
        )

    def _should_retry(
        self, message: AssistantMessage, error: ProviderError | None, attempts: int
    ) -> bool:
        return RetryPolicy(self._state.retry_settings()).should_retry(message, error, attempts)

    async def _auto_retry(
        self,
        message: AssistantMessage,
        entry_id: str | None,
        result: RunResult,
        attempt: int,
        run_more: RunMore,
    ) -> RunResult | None:
        state = self._state
        policy = RetryPolicy(state.retry_settings())
        retry_after = result.last_error.retry_after if result.last_error is not None else None
        delay = policy.delay_ms(attempt, retry_after)
        state.events.emit(
            AutoRetryStart(attempt, policy.max_attempts, delay, message.get("errorMessage") or "")
        )
        self._omit_attempt(message, entry_id)
        wait: asyncio.Future[object] = asyncio.ensure_future(state.sleep(delay / 1000))
        self._retry_wait = wait
        try:
            await wait
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not wait.cancelled() or (task is not None and task.cancelling()):
                raise  # the run itself was aborted
            return None
        finally:
            self._retry_wait = None
        return await run_more(state.queue.take())

    def _omit_attempt(self, message: AssistantMessage, entry_id: str | None) -> None:
        """Hide a failed attempt and its tool results from the model with ``context_edit``s."""
        if entry_id is None:
            return
        session = self._state.session
        call_ids = {b["id"] for b in message["content"] if b["type"] == "toolCall"}
        targets = [entry_id]
        seen = False
        for projected in session.stored_projection().entries:
            entry = projected.entry
            if entry.id == entry_id:
                seen = True
                continue
            if not seen or entry.type != "message":
                continue
            if entry.role == "assistant":
                break
            msg = entry.message
            if entry.role == "toolResult" and msg is not None and msg.get("toolCallId") in call_ids:
                targets.append(entry.id)
        for target in targets:
            appended = session.append_context_edit(target, None)
            self._state.events.emit(EntryAppended(appended.data))
