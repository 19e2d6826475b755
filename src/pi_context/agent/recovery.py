"""What the agent session does around a run: the pre-prompt compaction check, and after the
run agent-level retries of transient errors, overflow recovery (omit the failed attempt with
``context_edit``, compact, retry once) and the threshold check (compaction.md §4, §12).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from pi_context.errors import ProviderError
from pi_context.messages import AgentMessage, AssistantMessage
from pi_context.model import Model

from .checks import CompactionDecision, check_compaction
from .events import AutoRetryEnd, AutoRetryStart, CompactionEnd, EntryAppended
from .loop import AgentLoop, RunResult
from .operations import CompactionOps

__all__ = ["RecoveryOps"]


class RecoveryOps(CompactionOps):
    """Mixin of AgentSession: checks before a prompt and after a run."""

    _loop: AgentLoop
    _recovery_attempted: bool
    _sleep: Callable[[float], Any]
    _retries: int = 0

    @property
    def model(self) -> Model:  # pragma: no cover - overridden
        raise NotImplementedError

    def take_queued(self) -> list[AgentMessage]:  # pragma: no cover - overridden
        raise NotImplementedError

    def _last_assistant(self) -> tuple[AssistantMessage, str] | None:
        for entry in reversed(self.session.branch_view()):
            if entry.type == "message" and entry.role == "assistant" and entry.message is not None:
                return cast(AssistantMessage, entry.message), entry.id
        return None

    async def _pre_prompt_check(self) -> None:
        """Before a new prompt: the last response (aborted ones too) may call for a compaction."""
        last = self._last_assistant()
        if last is None:
            return
        decision = self._decide(*last, skip_aborted=False)
        if decision.action == "threshold":
            await self._auto_compact("threshold", will_retry=False)
        elif decision.action == "overflow":
            if decision.will_retry:
                self._omit_attempt(*last)
            await self._auto_compact("overflow", will_retry=False)

    def _decide(
        self, message: AssistantMessage, entry_id: str | None, *, skip_aborted: bool = True
    ) -> CompactionDecision:
        return check_compaction(
            message,
            entry_id,
            branch=self.session.branch_view(),
            projection=self.session.projection(),
            info=self.model.info,
            settings=self.compaction_settings(),
            skip_aborted=skip_aborted,
            recovery_attempted=self._recovery_attempted,  # always reset before a prompt
            cache=self._token_cache,
            facts=self._path_facts,
        )

    def will_retry(self, result: RunResult) -> bool:
        """Whether the session will continue this run (``agent_end.willRetry``): an automatic
        retry of a transient error, or an overflow recovery."""
        message = result.last_assistant
        if message is None or result.aborted:
            return False
        if self._should_retry(message, result.last_error, self._retries):
            return True
        decision = self._decide(message, result.last_assistant_entry_id)
        return bool(decision.action == "overflow" and decision.will_retry)

    async def _after_run(self, result: RunResult) -> bool:
        """Post-run handling; returns whether the run was aborted meanwhile."""
        self._retries = 0
        while True:
            retries = self._retries
            message = result.last_assistant
            entry_id = result.last_assistant_entry_id
            if message is None:
                return False
            if self._should_retry(message, result.last_error, retries):
                self._retries = retries = retries + 1
                result = await self._auto_retry(message, entry_id, result, retries)
                if result.aborted:
                    return True
                continue
            if retries:
                self._emit(
                    AutoRetryEnd(
                        message["stopReason"] != "error", retries, message.get("errorMessage")
                    )
                )
                self._retries = 0
            decision = self._decide(message, entry_id)
            if decision.action == "exhausted":
                self._emit(CompactionEnd("overflow", None, False, False, decision.error_message))
                await self._compact_failed_event("overflow", decision.error_message, False, False)
                return False
            if decision.action == "none":
                return False
            if decision.action == "overflow" and decision.will_retry:
                self._recovery_attempted = True
                self._omit_attempt(message, entry_id)
                go_on = await self._auto_compact("overflow", will_retry=True)
            else:
                go_on = await self._auto_compact(
                    "overflow" if decision.action == "overflow" else "threshold",
                    will_retry=False,
                )
            if not go_on:
                return False
            result = await self._loop.run(self.take_queued())
            if result.aborted:
                return True

    def _should_retry(
        self, message: AssistantMessage, error: ProviderError | None, attempts: int
    ) -> bool:
        if message["stopReason"] != "error":
            return False
        retry = self.retry_settings()
        if not retry.enabled or attempts >= retry.max_retries:
            return False
        if error is not None:
            return error.kind == "transient"
        from pi_context.model.classify import is_context_overflow
        from pi_context.model.retry import is_retryable

        return not is_context_overflow(message) and is_retryable(message)

    async def _auto_retry(
        self, message: AssistantMessage, entry_id: str | None, result: RunResult, attempt: int
    ) -> RunResult:
        retry = self.retry_settings()
        delay = min(retry.base_delay_ms * 2 ** (attempt - 1), retry.max_delay_ms)
        if result.last_error is not None and result.last_error.retry_after is not None:
            delay = min(int(result.last_error.retry_after * 1000), retry.max_delay_ms)
        self._emit(
            AutoRetryStart(attempt, retry.max_retries, delay, message.get("errorMessage") or "")
        )
        self._omit_attempt(message, entry_id)
        await self._sleep(delay / 1000)
        return await self._loop.run(self.take_queued())

    def _omit_attempt(self, message: AssistantMessage, entry_id: str | None) -> None:
        """Hide a failed attempt and its tool results from the model with ``context_edit``s."""
        if entry_id is None:
            return
        call_ids = {b["id"] for b in message["content"] if b["type"] == "toolCall"}
        targets = [entry_id]
        seen = False
        for projected in self.session.projection().entries:
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
            appended = self.session.append_context_edit(target, None)
            self._emit(EntryAppended(appended.data))
