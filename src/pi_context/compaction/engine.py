"""The compaction engine: prepare, ask a hook, summarize, check, append, report.

:class:`Compactor` is what the agent loop holds per session. :meth:`Compactor.compact` runs one
compaction and never leaves a session half-compacted: on any failure (a model error, a ``length``
stop, a tool call in the reply, the guard, a hook cancel, asyncio cancellation) nothing is
appended, failure events fire, and the context stays as it was. Manual compactions raise the
failure; automatic ones return ``None``.

Beyond pi, each switched by :class:`~pi_context.resources.settings.CompactionSettings`: the
offline summarizer (no model, or after a model failure), observation masking before
summarizing, and the guard with its pause after repeated failures.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from pi_context.compaction.accounting import (
    TokenCache,
    estimate_kept_context_tokens,
    estimate_projected_context_tokens,
    should_compact,
)
from pi_context.compaction.events import (
    BeforeCompact,
    BeforeCompactHook,
    CancelCompaction,
    CompactionEnd,
    CompactionEvent,
    CompactionFailed,
    CompactionFallback,
    CompactionPaused,
    CompactionReason,
    CompactionResult,
    CompactionStart,
    CustomCompaction,
    ObservationsMasked,
    SessionCompact,
)
from pi_context.compaction.masking import mask_observations
from pi_context.compaction.prepare import CompactionPreparation, _prepare
from pi_context.errors import CompactionCancelledError, CompactionError
from pi_context.messages import ThinkingLevel, Usage
from pi_context.model import Model, ModelRequest
from pi_context.prompt import get_current_system_message
from pi_context.resources.settings import CompactionSettings, RetrySettings
from pi_context.session.entries import Entry
from pi_context.session.projection import Projection
from pi_context.session.store import Session

__all__ = ["Compactor", "compact"]

_FAILURE_PREFIX: dict[str, str] = {
    "manual": "Compaction failed: ",
    "threshold": "Auto-compaction failed: ",
    "overflow": "Context overflow recovery failed: ",
}


@dataclass(frozen=True, slots=True)
class _Summary:
    """A summary text and where it came from (``fallback_error``: the model failure it replaced)."""

    text: str
    usage: Usage | None
    offline: bool
    fallback_error: str | None = None


class Compactor:
    """Compaction for one session, with its settings, model, hook and failure state.

    ``on_event`` receives every :data:`~pi_context.compaction.events.CompactionEvent`;
    ``before_compact`` is pi's ``session_before_compact`` hook (sync or async) and may return
    :class:`CancelCompaction` or :class:`CustomCompaction`. ``sleep`` and ``clock`` are
    injectable for tests.
    """

    def __init__(
        self,
        session: Session,
        model: Model | None = None,
        settings: CompactionSettings | None = None,
        *,
        retry: RetrySettings | None = None,
        on_event: Callable[[CompactionEvent], None] | None = None,
        before_compact: BeforeCompactHook | None = None,
        thinking_level: ThinkingLevel = "off",
        sleep: Callable[[float], Awaitable[Any]] | None = None,
        clock: Callable[[], int] | None = None,
    ) -> None:
        self.session = session
        self.model = model
        self.settings = settings or CompactionSettings()
        self.retry = retry or RetrySettings()
        self.on_event = on_event
        self.before_compact = before_compact
        self.thinking_level: ThinkingLevel = thinking_level
        self.sleep = sleep
        self.clock = clock
        """Unix milliseconds for the snapshot's timestamp; ``None``: the session's clock."""
        self.conversation: Callable[[], Awaitable[ModelRequest]] | None = None
        """Builds the request the agent would send now (``compaction.shareCache``)."""
        self.cache = TokenCache()
        self.failures = 0
        self.paused = False

    # -- state -----------------------------------------------------------------------------

    def _emit(self, event: CompactionEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def resume(self) -> None:
        """Re-enable automatic compaction after a pause (the user acted)."""
        self.paused = False
        self.failures = 0

    def context_tokens(self) -> int:
        """The canonical context estimate of the current leaf (pi's projected estimate)."""
        projection = self.session.stored_projection()
        path = self.session.branch_view()
        return estimate_projected_context_tokens(projection, path, self.cache).tokens

    def needs_compaction(self, context_window: int) -> bool:
        """Whether automatic compaction should run now (not paused, over the threshold)."""
        if context_window <= 0 or self.paused:
            return False
        return should_compact(self.context_tokens(), context_window, self.settings)

    def mask(self) -> list[Entry]:
        """Apply observation masking now (regardless of the setting); return the edits."""
        return self._mask(self.context_tokens())[0]

    def _mask(self, before: int) -> tuple[list[Entry], int]:
        """Mask, given the context estimate ``before``; the edits and the estimate after."""
        edits = mask_observations(self.session, self.settings.mask_keep_turns)
        if not edits:
            return edits, before
        after = self.context_tokens()
        self._emit(ObservationsMasked([e.get("targetId") for e in edits], before, after))
        return edits, after

    async def maybe_compact(
        self, context_window: int, *, reason: CompactionReason = "threshold"
    ) -> CompactionResult | None:
        """The automatic check: mask first (when enabled), summarize only if still too big."""
        if not self.settings.enabled or context_window <= 0 or self.paused:
            return None
        tokens = self.context_tokens()
        if not should_compact(tokens, context_window, self.settings):
            return None
        if self.settings.mask_observations:
            edits, tokens = self._mask(tokens)
            if edits and not should_compact(tokens, context_window, self.settings):
                return None
        return await self.compact(reason=reason)

    # -- compaction ------------------------------------------------------------------------

    async def compact(
        self,
        custom_instructions: str | None = None,
        *,
        reason: CompactionReason = "manual",
        will_retry: bool = False,
    ) -> CompactionResult | None:
        """Run one compaction. Manual ones raise on failure; automatic ones return ``None``."""
        manual = reason == "manual"
        if manual:
            self.paused = False
        elif self.paused or not self.settings.enabled:
            return None
        custom_instructions = (custom_instructions or "").strip() or None
        masked: list[Entry] = []
        if self.settings.mask_observations:
            masked = self.mask()
        path = self.session.branch_view()
        projection = self.session.stored_projection()
        prepared = _prepare(path, self.settings, projection, self.cache)
        if isinstance(prepared, str):
            if not manual:
                return None
            self._emit(CompactionStart(reason))
            self._fail(reason, CompactionError(prepared), False)
            raise CompactionError(prepared)
        self._emit(CompactionStart(reason))
        from_extension = False
        try:
            custom = await self._run_hook(
                BeforeCompact(prepared, path, custom_instructions, reason, will_retry)
            )
            if isinstance(custom, CancelCompaction):
                raise CompactionCancelledError("Compaction cancelled")
            if isinstance(custom, CustomCompaction):
                from_extension = True
                entry = self.session.append_compaction(
                    custom.summary,
                    custom.first_kept_entry_id,
                    custom.tokens_before,
                    details=custom.details,
                    usage=custom.usage,
                    from_hook=True,
                    system_message=self._snapshot(projection.messages),
                )
                result = self._result(entry, custom.usage, True, None, False, masked)
            else:
                summary = await self._summarize_checked(
                    prepared, projection, custom_instructions, reason
                )
                read, modified = prepared.file_ops.lists()
                entry = self.session.append_compaction(
                    summary.text,
                    prepared.first_kept_entry_id,
                    prepared.tokens_before,
                    details={"readFiles": read, "modifiedFiles": modified},
                    usage=summary.usage,
                    from_hook=False,
                    system_message=self._snapshot(projection.messages),
                )
                result = self._result(
                    entry, summary.usage, False, summary.fallback_error, summary.offline, masked
                )
        except asyncio.CancelledError:
            self._fail(reason, None, from_extension, aborted=True)
            raise
        except CompactionError as exc:
            aborted = isinstance(exc, CompactionCancelledError)
            self._fail(reason, exc, from_extension, aborted=aborted)
            if manual:
                raise
            return None
        self.failures = 0
        self._emit(SessionCompact(result.entry, from_extension, reason, will_retry))
        self._emit(CompactionEnd(reason, result, False, will_retry))
        return result

    async def _run_hook(self, payload: BeforeCompact) -> Any:
        if self.before_compact is None:
            return None
        answer = self.before_compact(payload)
        if inspect.isawaitable(answer):
            answer = await answer
        return answer

    def _snapshot(self, messages: Sequence[Any]) -> dict[str, Any] | None:
        """The current system message, stamped now, to store in the compaction entry."""
        current = get_current_system_message(messages)
        if current is None:
            return None
        snapshot = dict(current)
        snapshot["timestamp"] = self.clock() if self.clock is not None else self.session.now_ms()
        return snapshot

    def _result(
        self,
        entry: Entry,
        usage: Usage | None,
        from_extension: bool,
        fallback_error: str | None,
        offline: bool,
        masked: list[Entry],
    ) -> CompactionResult:
        # pi: the estimate of every message of the new projection (the cache knows the kept ones)
        after = sum(
            self.cache.item_tokens(item) for item in self.session.stored_projection().entries
        )
        return CompactionResult(
            summary=entry.get("summary"),
            first_kept_entry_id=entry.get("firstKeptEntryId"),
            tokens_before=entry.get("tokensBefore"),
            estimated_tokens_after=after,
            usage=usage,
            details=entry.get("details"),
            entry=entry,
            from_extension=from_extension,
            offline=offline,
            fallback_error=fallback_error,
            masked_entry_ids=[str(e.get("targetId")) for e in masked],
        )

    def _fail(
        self,
        reason: CompactionReason,
        exc: CompactionError | None,
        from_extension: bool,
        *,
        aborted: bool = False,
    ) -> None:
        message = None if aborted or exc is None else _FAILURE_PREFIX[reason] + str(exc)
        self._emit(CompactionEnd(reason, None, aborted, False, message))
        self._emit(CompactionFailed(reason, message, aborted, False, from_extension))
        if aborted:
            return
        self.failures += 1
        limit = self.settings.max_consecutive_failures
        if limit > 0 and self.failures >= limit and not self.paused:
            self.paused = True
            self._emit(
                CompactionPaused(
                    self.failures,
                    f"Automatic compaction is paused after {self.failures} failures in a row; "
                    "compact manually (or resume) to turn it back on.",
                )
            )

    # -- summaries -------------------------------------------------------------------------

    async def _summarize_checked(
        self,
        prep: CompactionPreparation,
        projection: Projection,
        custom: str | None,
        reason: CompactionReason,
    ) -> _Summary:
        """The summary the settings ask for, checked by the guard.

        In ``auto`` mode a model failure (the guard's rejection included) falls back to the
        offline summarizer, which is checked in turn; cancellation is never a failure.
        """
        mode = self.settings.summarizer
        if mode == "offline" or (self.model is None and mode == "auto"):
            return self._guarded(prep, projection, self._offline(prep, custom, None))
        if self.model is None:
            raise CompactionError("No model available for summarization")
        try:
            summary = await self._model_summary(self.model, prep, custom, reason)
            return self._guarded(prep, projection, summary)
        except CompactionCancelledError:
            raise
        except CompactionError as exc:
            if mode != "auto":
                raise
            self._emit(CompactionFallback(str(exc)))
            return self._guarded(prep, projection, self._offline(prep, custom, str(exc)))

    def _guarded(
        self, prep: CompactionPreparation, projection: Projection, summary: _Summary
    ) -> _Summary:
        """``summary`` if the guard is off or lets it pass; :class:`CompactionError` otherwise."""
        if not self.settings.guard:
            return summary
        from pi_context.compaction.guard import check_summary

        read, modified = prep.file_ops.lists()
        start = prep.cut.first_kept_index if prep.cut is not None else len(projection.entries)
        after = estimate_kept_context_tokens(projection, start, self.cache, summary=summary.text)
        problem = check_summary(
            summary.text,
            tokens_before=prep.tokens_before,
            tokens_after=after,
            read_files=read,
            modified_files=modified,
        )
        if problem is not None:
            raise CompactionError(f"Compaction guard: {problem}")
        return summary

    def _offline(
        self, prep: CompactionPreparation, custom: str | None, fallback_error: str | None
    ) -> _Summary:
        from pi_context.compaction.file_ops import format_file_operations
        from pi_context.compaction.offline import (
            offline_history_summary,
            offline_turn_prefix_summary,
        )
        from pi_context.compaction.prompts import SPLIT_TURN_SEPARATOR

        read, modified = prep.file_ops.lists()
        history = offline_history_summary(
            prep.messages_to_summarize, prep.previous_summary, read, modified, custom
        )
        if prep.is_split_turn and prep.turn_prefix_messages:
            history += SPLIT_TURN_SEPARATOR + offline_turn_prefix_summary(prep.turn_prefix_messages)
        text = history + format_file_operations(read, modified)
        return _Summary(text, None, True, fallback_error)

    async def _model_summary(
        self,
        model: Model,
        prep: CompactionPreparation,
        custom: str | None,
        reason: CompactionReason,
    ) -> _Summary:
        # The summarizer (its prompts, the retry policy, the failure classes) loads on the first
        # compaction: most runs never compact, and every start-up would pay for it otherwise.
        from pi_context.compaction.file_ops import format_file_operations
        from pi_context.compaction.prompts import (
            NO_PRIOR_HISTORY,
            SPLIT_TURN_SEPARATOR,
            history_prompt,
            turn_prefix_prompt,
        )
        from pi_context.compaction.summarize import (
            combine_usage,
            fit_summary_prompt,
            request_summary,
            shared_summary_request,
        )

        def ask(prompt: str, label: str, request: ModelRequest | None = None) -> Awaitable[Any]:
            return request_summary(
                model,
                prompt,
                request=request,
                label=label,
                reason=reason,
                retry=self.retry,
                thinking_level=self.thinking_level,
                on_event=cast(Callable[[Any], None], self._emit),
                sleep=self.sleep,
            )

        def history_request() -> str:
            # on a small window the transcript's middle is left out so that the summary fits
            return fit_summary_prompt(
                model,
                prep.serialized_history(),
                lambda serialized: history_prompt(serialized, prep.previous_summary, custom),
            )

        read, modified = prep.file_ops.lists()
        if self.settings.share_cache and self.conversation is not None and reason != "overflow":
            # one request over the whole conversation, read from the prompt cache; on any
            # failure (a tool call, an error) the standalone requests below are the fallback
            try:
                shared = shared_summary_request(await self.conversation(), custom)
                r = await ask("", "Summarization", shared)
                return _Summary(r.text + format_file_operations(read, modified), r.usage, False)
            except CompactionCancelledError:
                raise
            except CompactionError:
                pass
        usage: Usage | None = None
        if prep.is_split_turn and prep.turn_prefix_messages:
            history = (
                prep.previous_summary if prep.previous_summary is not None else NO_PRIOR_HISTORY
            )
            if prep.messages_to_summarize:
                r = await ask(history_request(), "Summarization")
                history, usage = r.text, r.usage
            p = await ask(
                fit_summary_prompt(
                    model,
                    prep.serialized_turn_prefix(),
                    lambda serialized: turn_prefix_prompt(serialized, custom),
                ),
                "Turn prefix summarization",
            )
            text = history + SPLIT_TURN_SEPARATOR + p.text
            usage = combine_usage(usage, p.usage) if usage is not None else p.usage
        else:
            r = await ask(history_request(), "Summarization")
            text, usage = r.text, r.usage
        return _Summary(text + format_file_operations(read, modified), usage, False)


async def compact(
    session: Session,
    model: Model | None = None,
    settings: CompactionSettings | None = None,
    *,
    custom_instructions: str | None = None,
    keep_recent_tokens: int | None = None,
    reason: CompactionReason = "manual",
    retry: RetrySettings | None = None,
    on_event: Callable[[CompactionEvent], None] | None = None,
    before_compact: BeforeCompactHook | None = None,
    sleep: Callable[[float], Awaitable[Any]] | None = None,
) -> CompactionResult | None:
    """One compaction of ``session``'s current leaf (see :class:`Compactor`)."""
    settings = settings or CompactionSettings()
    if keep_recent_tokens is not None:
        settings = settings.with_keep_recent(keep_recent_tokens)
    compactor = Compactor(
        session,
        model,
        settings,
        retry=retry,
        on_event=on_event,
        before_compact=before_compact,
        sleep=sleep,
    )
    return await compactor.compact(custom_instructions, reason=reason)
